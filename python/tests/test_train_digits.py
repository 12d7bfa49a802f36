"""The README demo (examples/train_digits.py) in a reduced form: the MLP for
fewer epochs, then the saved .mlirbc through paddle-run and paddle-compile."""

import importlib.util
from pathlib import Path

import numpy as np

DEMO = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def load_demo():
    spec = importlib.util.spec_from_file_location("train_digits", DEMO)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_digits_training_and_deployment(tmp_path):
    demo = load_demo()
    # The demo's MLP variant (its CNN compiles for about a minute; the CNN
    # train step is covered by test_train_steps) for 4 of the 12 epochs:
    # deterministic, 94.7% on this split.
    model, x_test, y_test, acc, _ = demo.train(epochs=4, kind="mlp", verbose=False)
    assert acc > 0.92, f"test accuracy {acc:.3f} after 4 epochs"
    expected, jit, aot = demo.deploy(model, x_test, tmp_path, verbose=False)
    assert expected.shape == y_test.shape
    np.testing.assert_array_equal(jit, expected)
    np.testing.assert_array_equal(aot, expected)
    assert (tmp_path / "digits.mlirbc").read_bytes()[:4] == b"ML\xefR"  # MLIR bytecode magic


def test_digits_data_split_is_fixed():
    demo = load_demo()
    a, b = demo.load_data(), demo.load_data()
    assert [x.shape for x in a] == [(1438, 1, 8, 8), (1438,), (359, 1, 8, 8), (359,)]
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
