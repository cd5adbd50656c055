"""What the installed verl says about custom reward functions, read from its source.

verl's modules import torch, ray and transformers at their top, which the reference venv does
not have, so nothing of verl is imported: its files are parsed with `ast` and its trainer
config is read as text. Prints one JSON object:

  version      the installed verl's version
  call         how NaiveRewardManager.run_single calls compute_score: the keywords every call
               passes, the names of the dicts it spreads with **, the keys those dicts may
               hold, and the keys run_single sets on extra_info before the call
  registered   {name: file} of the reward managers the trainer's registry holds
  reads        the config keys (dotted, from `config`) the trainer's reward setup reads: where
               it looks for the custom function and the manager
  config       {dotted key: default} of every scalar in the generated PPO trainer config
"""

import ast
import importlib.metadata
import importlib.util
import json
import os
import re
import sys

REGISTRY_PACKAGE = "verl.experimental.reward_loop.reward_manager"


def verl_root():
    # find_spec of a top-level package locates it without running its __init__.
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("verl is not installed in " + sys.executable)
    return list(spec.submodule_search_locations)[0]


def parse(path):
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), filename=path)


def method(tree, class_name, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    return item
    sys.exit("no %s.%s in verl's source" % (class_name, name))


def is_self_attribute(node, name):
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def dict_keys(node):
    """The constant keys of every dict literal in an expression (both arms of an `if`)."""
    return [
        key.value
        for found in ast.walk(node)
        if isinstance(found, ast.Dict)
        for key in found.keys
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    ]


def naive_call(root):
    run_single = method(
        parse(os.path.join(root, "experimental/reward_loop/reward_manager/naive.py")),
        "NaiveRewardManager",
        "run_single",
    )
    calls = [
        node
        for node in ast.walk(run_single)
        if isinstance(node, ast.Call) and is_self_attribute(node.func, "compute_score")
    ]
    if not calls:
        sys.exit("NaiveRewardManager.run_single does not call self.compute_score")
    shapes = set()
    for call in calls:
        if call.args:
            sys.exit("NaiveRewardManager.run_single passes compute_score positional arguments")
        named = tuple(k.arg for k in call.keywords if k.arg is not None)
        spread = tuple(
            k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, ast.Name)
        )
        shapes.add((named, spread))
    if len(shapes) != 1:
        sys.exit("NaiveRewardManager.run_single calls compute_score in different ways: %r" % shapes)
    named, spread = shapes.pop()
    extra = []
    for node in ast.walk(run_single):
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if any(t in spread for t in targets):
                extra.extend(dict_keys(node.value))
    info_keys = [
        target.slice.value
        for node in ast.walk(run_single)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id == "extra_info"
        and isinstance(target.slice, ast.Constant)
    ]
    return {
        "calls": len(calls),
        "keywords": list(named),
        "spread": list(spread),
        "extraKeywords": sorted(set(extra)),
        "extraInfoKeys": info_keys,
    }


def registered(root):
    """Names given to the registry's `register` decorator, under whatever alias a file uses."""
    folder = os.path.join(root, "experimental/reward_loop/reward_manager")
    names = {}
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".py"):
            continue
        tree = parse(os.path.join(folder, file))
        aliases = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module in (REGISTRY_PACKAGE, REGISTRY_PACKAGE + ".registry")
            for alias in node.names
            if alias.name == "register"
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Name)
                    and decorator.func.id in aliases
                    and decorator.args
                    and isinstance(decorator.args[0], ast.Constant)
                ):
                    names[decorator.args[0].value] = file
    return names


def dotted(node):
    """`config.a.b` or `config.a.get("b")` as "config.a.b"; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base and base + "." + node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        base = dotted(node.func.value)
        return base and base + "." + node.args[0].value
    return None


def trainer_reads(root):
    tree = parse(os.path.join(root, "trainer/ppo/reward.py"))
    reads = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.name in (
            "get_custom_reward_fn",
            "resolve_reward_manager_cls",
        ):
            for node in ast.walk(function):
                name = dotted(node)
                # `config.reward.get` itself is the method, not a key.
                if name and name.startswith("config.") and not name.endswith(".get"):
                    reads.add(name)
    return sorted(reads)


KEY_LINE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_]*|'[^']*'):(.*)$")


def config(root):
    """Dotted keys of the generated trainer config (plain block YAML) and their scalar values."""
    path = os.path.join(root, "trainer/config/_generated_ppo_trainer.yaml")
    keys = {}
    stack = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = KEY_LINE.match(line.rstrip("\n"))
            if not match:
                continue
            indent, key, rest = len(match.group(1)), match.group(2).strip("'"), match.group(3)
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, key))
            value = rest.split(" #")[0].strip()
            if value:
                keys[".".join(k for _, k in stack)] = value
    return keys


def main():
    root = verl_root()
    print(
        json.dumps(
            {
                "version": importlib.metadata.version("verl"),
                "call": naive_call(root),
                "registered": registered(root),
                "reads": trainer_reads(root),
                "config": config(root),
            }
        )
    )


if __name__ == "__main__":
    main()
