"""paddle-import-onnx: converts an ONNX model to a `paddle` MLIR file.

    paddle-import-onnx MODEL.onnx -o OUT.mlir [--function NAME]

Writes text MLIR, or bytecode when OUT ends in `.mlirbc`, as the other
tools write files (`_core.write_file`: a temporary file and a rename, so a
failed or interrupted import leaves no file; a device node or FIFO is
written into, never replaced). Locations
(the model file and each op's ONNX node name) are written with
`--debug-info` only, in either format. The function (a C identifier)
takes the graph inputs in order and holds the weights, so
`paddle-run OUT.mlir --input x.npy ...` runs it as it is. Errors (missing or
corrupt file, unsupported op or attribute) are one message on stderr and
exit code 1.
"""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="paddle-import-onnx",
        description="Import an ONNX model (opset 13+) as paddle dialect MLIR.")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", required=True,
                        help="output file: .mlir (text) or .mlirbc (bytecode)")
    parser.add_argument("--function", default="main",
                        help="name of the imported function, a C identifier (default: main)")
    parser.add_argument("--debug-info", action="store_true",
                        help="keep locations (model file and node name) in the output, so "
                             "that later errors name the ONNX node")
    args = parser.parse_args(argv)

    from .importer import OnnxImportError, check_function_name, load
    try:
        check_function_name(args.function)
    except ValueError as e:
        parser.error(f"--function: {e}")
    try:
        from paddle_mlir import _core
    except ImportError as e:
        print(f"paddle-import-onnx: error: the native extension is missing ({e}); "
              "build the project first", file=sys.stderr)
        return 1
    try:
        model = load(args.model, function_name=args.function)
        if args.output.endswith(".mlirbc"):
            # Bytecode always carries locations: drop them unless asked.
            if not args.debug_info:
                model.module.run_passes("strip-debuginfo")
            model.save(args.output)
        else:
            _core.write_file(args.output,
                             model.to_text(debug_info=args.debug_info).encode())
    except (OnnxImportError, OSError, _core.MLIRError) as e:
        print(f"paddle-import-onnx: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
