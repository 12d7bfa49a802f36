"""Pytrees: nested tuples, lists, dicts (and registered classes) of leaves.

The tree structure ("treedef") is a hashable value, so it can be part of a
jit cache key. Dict keys are sorted, as in JAX, so two dicts with the same
keys flatten the same way whatever their insertion order.
"""

_REGISTRY = {}


def register_pytree_node(cls, flatten, unflatten):
    """Makes instances of `cls` pytree nodes.

    `flatten(obj) -> (children, aux)` where `aux` is hashable static data;
    `unflatten(aux, children) -> obj`.
    """
    _REGISTRY[cls] = (flatten, unflatten)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class _Leaf:
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = _Leaf()


def tree_flatten(tree):
    """Returns (leaves, treedef). None is an empty node, as in JAX."""
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(x, leaves):
    if x is None:
        return ("none",)
    t = type(x)
    if t in _REGISTRY:
        children, aux = _REGISTRY[t][0](x)
        return ("custom", t, aux, tuple(_flatten(c, leaves) for c in children))
    if _is_namedtuple(x):
        return ("namedtuple", t, tuple(_flatten(c, leaves) for c in x))
    if t is tuple:
        return ("tuple", tuple(_flatten(c, leaves) for c in x))
    if t is list:
        return ("list", tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            from ._trace import where
            kinds = sorted({type(k).__name__ for k in x})
            raise TypeError(
                f"{where()}: a dict in a pytree needs keys that sort "
                f"together (its leaves are ordered by key), got keys of "
                f"types {', '.join(kinds)}") from None
        return ("dict", keys, tuple(_flatten(x[k], leaves) for k in keys))
    leaves.append(x)
    return LEAF


def tree_unflatten(treedef, leaves):
    it = iter(leaves)
    out = _unflatten(treedef, it)
    rest = list(it)
    if rest:
        raise ValueError(f"tree_unflatten: {len(rest)} leaves too many")
    return out


def _unflatten(td, it):
    if td is LEAF:
        return next(it)
    kind = td[0]
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(_unflatten(c, it) for c in td[1])
    if kind == "list":
        return [_unflatten(c, it) for c in td[1]]
    if kind == "dict":
        return {k: _unflatten(c, it) for k, c in zip(td[1], td[2])}
    if kind == "namedtuple":
        return td[1](*[_unflatten(c, it) for c in td[2]])
    if kind == "custom":
        return _REGISTRY[td[1]][1](td[2], [_unflatten(c, it) for c in td[3]])
    raise AssertionError(td)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_map(f, tree, *rest):
    """Applies `f` leaf by leaf; `rest` trees must have the structure of `tree`."""
    leaves, td = tree_flatten(tree)
    others = []
    for r in rest:
        lv, td2 = tree_flatten(r)
        if td2 != td:
            raise ValueError("tree_map: the trees have different structures")
        others.append(lv)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def num_leaves(treedef):
    if treedef is LEAF:
        return 1
    kind = treedef[0]
    if kind == "none":
        return 0
    children = treedef[-1]
    return sum(num_leaves(c) for c in children)
