import sys

from gpucap_recipes.cli import main

# Guarded: a LocalCluster's worker processes are spawned, and re-import the
# main module under another name.
if __name__ == "__main__":
    sys.exit(main())
