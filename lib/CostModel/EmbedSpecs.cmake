# Writes OUTPUT: one C++ initializer entry {"name", R"json(...)json"} per
# spec file in SPEC_DIR, so the tools carry the built-in specs with them.
# Run with cmake -P (see CMakeLists.txt).
file(GLOB specs "${SPEC_DIR}/*.json")
list(SORT specs)
get_filename_component(dir "${SPEC_DIR}" NAME)
set(text "// Generated from specs/${dir} by EmbedSpecs.cmake; do not edit.\n")
foreach(spec ${specs})
  get_filename_component(name "${spec}" NAME_WE)
  file(READ "${spec}" body)
  string(APPEND text "{\"${name}\", R\"json(${body})json\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different
                "${OUTPUT}.tmp" "${OUTPUT}")
