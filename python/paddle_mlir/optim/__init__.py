"""pm.optim: SGD (momentum, weight decay, Nesterov), Adam, AdamW.

State lives in arrays (`opt.state`), updates are pure (`opt.update`), so a
compiled pm.nn.TrainStep updates parameters and state in place.
"""

from .optimizers import SGD, Adam, AdamW, Optimizer

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
