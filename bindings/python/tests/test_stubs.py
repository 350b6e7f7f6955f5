"""The type stubs describe the installed module: every name they declare exists, and every
public method of the module is in them."""

import ast
import inspect
import pathlib

import bloomkit
import bloomkit._bloomkit as native


def stub_tree():
    path = pathlib.Path(native.__file__).with_name("_bloomkit.pyi")
    assert path.exists(), "the stubs are installed next to the module"
    return ast.parse(path.read_text())


def declared():
    classes, functions = {}, set()
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            }
        elif isinstance(node, ast.FunctionDef):
            functions.add(node.name)
    return classes, functions


def stub_bases(name):
    """The names of the bases a class has in the stubs (with theirs)."""
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for base in node.bases:
                if isinstance(base, ast.Name):
                    yield base.id
                    yield from stub_bases(base.id)


def test_every_stubbed_name_exists():
    classes, functions = declared()
    for name, methods in classes.items():
        if name.startswith("_"):  # @type_check_only: a base that exists in the stubs only
            continue
        cls = getattr(native, name)
        for method in methods - {"__init__"}:
            assert hasattr(cls, method), f"{name}.{method} is in the stubs only"
    for name in functions:
        assert callable(getattr(native, name))


def test_every_public_method_is_stubbed():
    classes, _ = declared()
    for name, cls in inspect.getmembers(native, inspect.isclass):
        if issubclass(cls, Exception):
            continue
        assert name in classes, f"class {name} has no stub"
        inherited = set()
        for base in cls.__mro__[1:]:
            inherited |= classes.get(base.__name__, set())
        for base in stub_bases(name):  # the stubs-only bases
            inherited |= classes.get(base, set())
        for attr in vars(cls):
            if attr.startswith("_") and attr not in ("__contains__", "__len__", "__or__"):
                continue
            assert attr in classes[name] | inherited, f"{name}.{attr} has no stub"


def test_the_package_exports_the_module_names():
    for name in bloomkit.__all__:
        assert getattr(bloomkit, name) is getattr(native, name)
    assert (pathlib.Path(bloomkit.__file__).parent / "py.typed").exists()


def test_signatures_show_real_defaults():
    # A default the binding cannot print shows as `...` in help() and inspect.
    import bloomkit.redis

    checked = 0
    for module in (native, bloomkit.redis):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Exception):
                continue
            for attr in [cls, *vars(cls).values()]:
                try:
                    signature = inspect.signature(attr)
                except (TypeError, ValueError):
                    continue
                checked += 1
                for p in signature.parameters.values():
                    assert p.default is not Ellipsis, f"{name}: {p.name} shows no default"
    assert checked > 50
    growth = inspect.signature(bloomkit.ScalableBloomFilter).parameters["growth"]
    assert growth.default == 2
