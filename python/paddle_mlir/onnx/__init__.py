"""ONNX importer: `pm.onnx.load(path)` -> a `paddle` module.

Needs only `onnx` and the native extension `paddle_mlir._core`; the rest of
the frontend is not imported. See docs/onnx.md.
"""

from .importer import ImportedModel, OnnxImportError, import_model, load
from .ops import SUPPORTED_OPS

__all__ = ["ImportedModel", "OnnxImportError", "SUPPORTED_OPS", "import_model", "load"]
