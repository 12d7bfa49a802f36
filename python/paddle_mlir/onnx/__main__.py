"""`python -m paddle_mlir.onnx MODEL.onnx -o OUT.mlir` (= paddle-import-onnx)."""

import sys

from .cli import main

sys.exit(main())
