"""pm.nn: layers, losses and compiled training steps.

Modules own their parameters (float32 numpy arrays) and buffers; forwards
are written with pm.nn.functional, whose ops are the frontend's: eager on
numpy arrays (compiled per signature, as every pm op) or traced inside
pm.jit / pm.grad. `TrainStep` compiles forward, backward and the
optimizer update into one function that updates the module's arrays in
place. See docs/training.md.
"""

from . import functional
from .layers import (GELU, AvgPool2D, BatchNorm2D, Conv2D, CrossEntropyLoss, Dropout,
                     Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax, MaxPool2D,
                     MSELoss, MultiHeadAttention, ReLU, Sigmoid, Softmax, Tanh, manual_seed)
from .module import Module, ModuleList, Parameter, Sequential, functional_call
from .train import InferenceFunction, StepOutput, TrainStep, export

__all__ = [
    "functional", "Module", "ModuleList", "Parameter", "Sequential", "functional_call",
    "Linear", "Conv2D", "MaxPool2D", "AvgPool2D", "BatchNorm2D", "LayerNorm", "Embedding",
    "Dropout", "MultiHeadAttention", "ReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
    "Flatten", "Identity", "CrossEntropyLoss", "MSELoss", "manual_seed", "TrainStep",
    "InferenceFunction", "StepOutput", "export",
]
