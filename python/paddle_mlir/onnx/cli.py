"""paddle-import-onnx: converts an ONNX model to a `paddle` MLIR file.

    paddle-import-onnx MODEL.onnx -o OUT.mlir [--function NAME]

Writes text MLIR, or bytecode when OUT ends in `.mlirbc`, through a
temporary file and a rename (a failed import leaves no file). The function
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
                        help="name of the imported function (default: main)")
    parser.add_argument("--debug-info", action="store_true",
                        help="print locations (model file and node name) in text output")
    args = parser.parse_args(argv)

    from .importer import OnnxImportError, load
    try:
        from paddle_mlir import _core
    except ImportError as e:
        print(f"paddle-import-onnx: error: the native extension is missing ({e}); "
              "build the project first", file=sys.stderr)
        return 1
    try:
        model = load(args.model, function_name=args.function)
        if args.debug_info and not args.output.endswith(".mlirbc"):
            _save_text(args.output, model.to_text(debug_info=True))
        else:
            model.save(args.output)
    except (OnnxImportError, OSError, _core.MLIRError) as e:
        print(f"paddle-import-onnx: error: {e}", file=sys.stderr)
        return 1
    return 0


def _save_text(path, text):
    import os
    import tempfile
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".paddle-import-onnx-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


if __name__ == "__main__":
    sys.exit(main())
