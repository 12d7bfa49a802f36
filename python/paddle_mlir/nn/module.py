"""Module and Parameter: a PyTorch-shaped surface over a functional core.

A Module owns its parameters and buffers as C-contiguous float32 (buffers:
any dtype) numpy arrays. Nothing in the forward mutates them: when a train
step is traced, `functional_call` temporarily binds every parameter and
buffer name to a traced value (a function argument), runs the forward, and
reads back the buffer values the forward assigned (BatchNorm running stats,
Dropout step counters) as new results. The compiled step then writes the
new parameters, optimizer state and buffers into the very numpy arrays the
module owns (buffer donation), so the module stays the single owner.
"""

import numpy as np


class Parameter:
    """Marks an array as a trainable parameter when assigned to a Module
    attribute. The module stores its own C-contiguous float32 copy."""

    def __init__(self, data):
        self.data = np.array(data, dtype=np.float32, order="C", copy=True)


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------ attributes
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: call super().__init__() before assigning '{name}'")
        if isinstance(value, Parameter):
            self._parameters[name] = value.data
        elif isinstance(value, Module):
            self._modules[name] = value
        elif name in self._parameters:
            # Rebinding would detach the array optimizers and compiled steps
            # hold; values are set in place instead.
            raise TypeError(f"{type(self).__name__}.{name} is a parameter: assign "
                            f"nn.Parameter(...) or write into it ({name}[...] = value)")
        elif name in self._buffers:
            self.update_buffer(name, value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only called when normal lookup fails, i.e. for registered names.
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def update_buffer(self, name, value):
        """How a forward stores a new buffer value (running stats, step
        counters): rebinds the name inside functional_call (the value is a
        result of the traced function), else writes into the module's own
        array so eager runs keep the same buffer."""
        if _functional_depth[0] > 0:
            self._buffers[name] = value
        else:
            self._buffers[name][...] = value

    def register_buffer(self, name, array):
        """A non-trainable state array (kept C-contiguous, dtype preserved)."""
        self._buffers[name] = np.array(array, order="C", copy=True)

    # --------------------------------------------------------------- calling
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------- traversal
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def children(self):
        return list(self._modules.values())

    def modules(self):
        return [m for _, m in self.named_modules()]

    def named_parameters(self):
        out = dict()
        for prefix, m in self.named_modules():
            for name, p in m._parameters.items():
                out[f"{prefix}.{name}" if prefix else name] = p
        return out

    def parameters(self):
        return list(self.named_parameters().values())

    def named_buffers(self):
        out = dict()
        for prefix, m in self.named_modules():
            for name, b in m._buffers.items():
                out[f"{prefix}.{name}" if prefix else name] = b
        return out

    def buffers(self):
        return list(self.named_buffers().values())

    def state_dict(self):
        """Copies of every parameter and buffer, by dotted name."""
        out = dict((k, v.copy()) for k, v in self.named_parameters().items())
        out.update((k, v.copy()) for k, v in self.named_buffers().items())
        return out

    def load_state_dict(self, state):
        """Copies `state` into the module's own arrays (in place: compiled
        train steps holding those buffers stay valid)."""
        own = dict(self.named_parameters())
        own.update(self.named_buffers())
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if missing or unexpected:
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for k, dst in own.items():
            src = np.asarray(state[k])
            if src.shape != dst.shape:
                raise ValueError(
                    f"load_state_dict: '{k}' has shape {src.shape}, the module expects {dst.shape}")
            dst[...] = src.astype(dst.dtype, copy=False)

    def num_parameters(self):
        return int(sum(p.size for p in self.parameters()))

    # ----------------------------------------------------------------- modes
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            lines.append(f"  ({name}): " + repr(child).replace("\n", "\n  "))
        return "\n".join(lines) + ("\n)" if self._modules else ")")

    def extra_repr(self):
        return ""


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential: item {i} is a {type(layer).__name__}, not a Module")
            setattr(self, str(i), layer)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def forward(self, x):
        for layer in self._modules.values():
            x = layer(x)
        return x


class ModuleList(Module):
    def __init__(self, layers=()):
        super().__init__()
        for layer in layers:
            self.append(layer)

    def append(self, layer):
        setattr(self, str(len(self._modules)), layer)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


_functional_depth = [0]


def functional_call(module, params, buffers, args, kwargs=None):
    """Runs `module(*args, **kwargs)` with its parameters and buffers bound
    to `params` / `buffers` (dicts by dotted name, e.g. traced values).

    Returns (output, new_buffers): the buffer values after the forward (the
    ones a layer assigned, the given ones otherwise). The module's own
    arrays are restored afterwards, whatever happens.
    """
    kwargs = kwargs or {}
    owners = {}
    for prefix, m in module.named_modules():
        for table in ("_parameters", "_buffers"):
            for name in getattr(m, table):
                owners[f"{prefix}.{name}" if prefix else name] = (m, table, name)
    for label, given, table in (("parameter", params, "_parameters"),
                                ("buffer", buffers, "_buffers")):
        for key in given:
            if key not in owners or owners[key][1] != table:
                raise KeyError(f"functional_call: the module has no {label} named '{key}'")
    saved = [(m, table, name, getattr(m, table)[name]) for m, table, name in owners.values()]
    _functional_depth[0] += 1
    try:
        for key, value in list(params.items()) + list(buffers.items()):
            m, table, name = owners[key]
            getattr(m, table)[name] = value
        out = module(*args, **kwargs)
        new_buffers = dict()
        for key in buffers:
            m, table, name = owners[key]
            new_buffers[key] = getattr(m, table)[name]
        return out, new_buffers
    finally:
        _functional_depth[0] -= 1
        for m, table, name, value in saved:
            getattr(m, table)[name] = value
