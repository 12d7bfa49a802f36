# lit configuration of the paddle IR tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "PADDLE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mlir_obj_dir, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# The built-in default device, whatever spec this machine's user installed
# (paddle-calibrate --install keeps it in $XDG_CACHE_HOME).
config.environment["XDG_CACHE_HOME"] = os.path.join(config.mlir_obj_dir, "test-cache")

llvm_config.use_default_substitutions()
tool_dirs = [config.paddle_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["paddle-opt", "paddle-run", "paddle-compile"], tool_dirs)
config.substitutions.append(("%python", config.python_executable))
llvm_config.with_environment("PATH", config.paddle_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
