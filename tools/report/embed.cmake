# cmake -DIN=file -DOUT=file.cc -DNAME=kSymbol -P embed.cmake: a C++ source
# holding IN's text as `std::string_view gpucap::tools::report_assets::NAME`,
# so the page's scripts ship inside the binary.
file(READ "${IN}" content)
string(FIND "${content}" ")gpucap_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string delimiter )gpucap_embed\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed.cmake; do not edit.\n#include <string_view>\n"
  "namespace gpucap::tools::report_assets {\nextern const std::string_view ${NAME};\n"
  "const std::string_view ${NAME} = R\"gpucap_embed(${content})gpucap_embed\";\n}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
