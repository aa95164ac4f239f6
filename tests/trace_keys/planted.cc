// Not built: a source with trace key literals, which check_literals.py must
// find (the TraceKeys.CheckerFindsPlantedLiteral test), beside ones it must
// not: text in comments, and a literal that only contains a key.
// "External id" in a line comment
/* "correlation" in a block comment */
const char* kFormat = "External id: %d";
const char* kPlanted = "External id";
const char* kPlantedRaw = R"(stream)";
