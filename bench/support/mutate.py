#!/usr/bin/env python3
"""Mutate correct pandas code into code that still runs but answers another question.

stdin:  {"code": str, "columns": [{"name", "dtype"}], "values": {col: [values]}, "seed": int}
stdout: [{"kind": str, "code": str, "note": str}]  -- at most 2 per kind, deterministic per seed.
Each candidate names one node by its position in ast.walk order plus an edit; the edit is applied
to a fresh parse of the code, so candidates never interfere with each other.
"""
import ast
import json
import random
import sys

KINDS = ["other-column", "filter-dropped", "filter-changed", "other-aggregate",
         "row-off-by-one", "head-n", "sort-flipped"]
AGG = {"sum": ["mean"], "mean": ["median", "sum"], "median": ["mean"], "max": ["min"],
       "min": ["max"], "idxmax": ["idxmin"], "idxmin": ["idxmax"], "nlargest": ["nsmallest"],
       "nsmallest": ["nlargest"], "count": ["nunique"], "std": ["var"], "var": ["std"]}
AGG_STR_CALLS = {"agg", "aggregate", "transform", "pivot_table", "apply"}
MASK_METHODS = {"isin", "contains", "startswith", "endswith", "match", "fullmatch", "between",
                "isna", "isnull", "notna", "notnull", "duplicated", "eq", "ne", "gt", "lt", "ge", "le"}
KEY_METHODS = {"groupby", "sort_values", "nlargest", "nsmallest", "set_index", "drop_duplicates",
               "pivot_table", "pivot", "dropna", "merge", "value_counts", "drop"}
DF_ATTRS = {"index", "values", "columns", "shape", "size", "T", "dtypes", "loc", "iloc", "at",
            "iat", "str", "dt", "empty", "name", "ndim", "axes"}
MODULES = {"pd", "np", "pandas", "numpy", "math", "re"}
OP_SWAP = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE,
           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
OP_TEXT = {ast.Gt: ">", ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def short(node, n=50):
    s = ast.unparse(node)
    return s if len(s) <= n else s[: n - 3] + "..."


def replace(tree, old, new):
    """Put `new` where `old` sits in the tree."""
    for parent in ast.walk(tree):
        for field, val in ast.iter_fields(parent):
            if val is old:
                return setattr(parent, field, new)
            for i, v in enumerate(val if isinstance(val, list) else []):
                if v is old:
                    val[i] = new
                    return


def setter(path, new, note):
    """Edit: set node.<path> (dotted attributes / list indexes; "" = the node itself) to `new`,
    or to new(old) when `new` is a function (so it can reuse the fresh tree's subtrees)."""
    def fn(t, n):
        if path == "":
            return replace(t, n, new(n) if callable(new) else new) or note
        *head, last = path.split(".")
        for p in head:
            n = n[int(p)] if p.isdigit() else getattr(n, p)
        if last.isdigit():
            n[int(last)] = new(n[int(last)]) if callable(new) else new
        else:
            setattr(n, last, new(getattr(n, last)) if callable(new) else new)
        return note
    return fn


def attr_of(call):
    """Method name of a call like x.m(...), else None."""
    ok = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    return call.func.attr if ok else None


def scalar_const(node):
    """(True, value) for a str/int/float constant (negatives too), else (False, None)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        ok, v = scalar_const(node.operand)
        return (True, -v) if ok and type(v) in (int, float) else (False, None)
    if isinstance(node, ast.Constant) and type(node.value) in (str, int, float):
        return True, node.value
    return False, None


def int_const(node):
    ok, v = scalar_const(node)
    return v if ok and type(v) is int else None


def str_consts(node):
    """String constants in node, looking into lists, tuples and dict values."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    subs = node.elts if isinstance(node, (ast.List, ast.Tuple)) else \
        node.values if isinstance(node, ast.Dict) else []
    return [c for e in subs for c in str_consts(e)]


def to_number(v):
    """A number from a cell value ('1,234', '$5', '12%'), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    s = str(v).strip()
    for ch in ",$%€£ ":
        s = s.replace(ch, "")
    try:
        f = float(s)
    except ValueError:
        return None
    if f != f or abs(f) == float("inf"):
        return None
    return v if isinstance(v, (int, float)) else int(f) if s.lstrip("-").isdigit() else f


def column_kinds(columns, values, cleans):
    """Column name -> 'num' | 'numtext' (numeric-looking text the code cleans) | 'text' | ..."""
    kinds = {}
    for c in columns:
        name, dt = c["name"], str(c.get("dtype", "object")).lower()
        kind = "num" if dt.startswith(("int", "uint", "float")) else \
            "bool" if dt.startswith("bool") else "date" if dt.startswith("datetime") else "text"
        if kind == "text" and cleans:
            vals = [v for v in values.get(name, []) if v is not None and v != ""]
            if vals and sum(to_number(v) is not None for v in vals) >= 0.8 * len(vals):
                kind = "numtext"
        kinds[name] = kind
    return kinds


def pick_value(old, pool, rng):
    """Another value of the column, shaped like the constant it replaces."""
    opts = []
    for v in pool:
        if v is None or isinstance(v, bool):
            continue
        if isinstance(old, str):
            w = v if isinstance(v, str) else str(v)
            w = w.lower() if old.islower() else w.upper() if old.isupper() else w
        else:
            w = to_number(v)
            if w is not None and type(old) is int and float(w).is_integer():
                w = int(w)
        if w is not None and w != old and w not in opts:
            opts.append(w)
    return rng.choice(opts) if opts else None


def find_candidates(tree, kinds, values, rng):
    """kind -> [(node index in ast.walk order, edit fn(tree, node) -> note)]."""
    nodes = list(ast.walk(tree))
    ix = {id(n): i for i, n in enumerate(nodes)}
    call_funcs = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    cands = {k: [] for k in KINDS}

    def add(kind, node, fn):
        cands[kind].append((ix[id(node)], fn))

    def col_attr(n, funcs):  # x.Col used as a column (not a method, not a module member)
        return (isinstance(n, ast.Attribute) and n.attr not in DF_ATTRS and id(n) not in funcs
                and not (isinstance(n.value, ast.Name) and n.value.id in MODULES))

    # ---- 1. other-column: every use of one column key -> a column of the same kind
    used = set()
    for n in nodes:
        if isinstance(n, ast.Subscript):
            used |= {c.value for c in str_consts(n.slice)}
        elif isinstance(n, ast.Call) and attr_of(n) in KEY_METHODS:
            used |= {c.value for a in n.args + [k.value for k in n.keywords] for c in str_consts(a)}
        elif col_attr(n, call_funcs):
            used.add(n.attr)

    def rename(x, y):
        def fn(t, _):
            all_nodes = list(ast.walk(t))
            funcs = {id(n.func) for n in all_nodes if isinstance(n, ast.Call)}
            fstr_text = {id(c) for j in all_nodes if isinstance(j, ast.JoinedStr) for c in j.values}
            for n in all_nodes:
                if isinstance(n, ast.Constant) and n.value == x and type(n.value) is str \
                        and id(n) not in fstr_text:
                    n.value = y
                elif col_attr(n, funcs) and n.attr == x:
                    if y.isidentifier():
                        n.attr = y
                    else:
                        replace(t, n, ast.Subscript(n.value, ast.Constant(y), n.ctx))
            return f"column '{x}' -> '{y}'"
        return fn

    for x in sorted(c for c in used if c in kinds):
        for y in kinds:
            if y != x and kinds[y] == kinds[x]:
                add("other-column", tree, rename(x, y))

    # ---- 2. filter-dropped: a boolean-mask selection (or one conjunct of it) removed
    def is_mask(e, names):
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr)):
            return is_mask(e.left, names) or is_mask(e.right, names)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
            return is_mask(e.operand, names)
        return (isinstance(e, ast.Compare) or attr_of(e) in MASK_METHODS
                or (isinstance(e, ast.Name) and e.id in names))

    def single_name_assign(n):
        return isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)

    mask_names = {n.targets[0].id for n in nodes if single_name_assign(n) and is_mask(n.value, set())}
    mask_exprs = []  # every expression used as a mask, for conjuncts and comparisons
    for n in nodes:
        if isinstance(n, ast.Subscript):
            v, s = n.value, n.slice
            loc = isinstance(v, ast.Attribute) and v.attr == "loc"
            if isinstance(v, ast.Attribute) and v.attr in ("iloc", "at", "iat"):
                continue
            if loc and isinstance(s, ast.Tuple) and s.elts and is_mask(s.elts[0], mask_names):
                add("filter-dropped", n, setter("slice.elts.0", ast.Slice(),
                                                f"dropped filter `{short(s.elts[0])}`"))
                mask_exprs.append(s.elts[0])
            elif is_mask(s, mask_names) and isinstance(n.ctx, ast.Load):  # df[m] / df.loc[m] -> df
                keep = (lambda n: n.value.value) if loc else (lambda n: n.value)
                add("filter-dropped", n, setter("", keep, f"dropped filter `{short(s)}`"))
                mask_exprs.append(s)
        elif single_name_assign(n) and n.targets[0].id in mask_names:
            mask_exprs.append(n.value)
        elif attr_of(n) == "query" and n.args:
            add("filter-dropped", n, setter("", lambda n: n.func.value,
                                            f"dropped query `{short(n.args[0])}`"))

    compares = []
    for e in mask_exprs:
        for b in ast.walk(e):
            if isinstance(b, ast.BinOp) and isinstance(b.op, ast.BitAnd):  # keep one side only
                add("filter-dropped", b, setter("", lambda n: n.left, f"dropped conjunct `{short(b.right)}`"))
                add("filter-dropped", b, setter("", lambda n: n.right, f"dropped conjunct `{short(b.left)}`"))
            if isinstance(b, ast.Compare) and len(b.ops) == 1 and b not in compares:
                compares.append(b)

    # ---- 3. filter-changed: compared constant -> another value of the column, or operator flipped
    def column_of(e):
        for s in ast.walk(e):
            if isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Constant) and s.slice.value in kinds:
                return s.slice.value
            if col_attr(s, call_funcs) and s.attr in kinds:
                return s.attr
        return None

    for c in compares:
        op = type(c.ops[0])
        if op in OP_SWAP:
            add("filter-changed", c, setter("ops.0", OP_SWAP[op](),
                f"operator '{OP_TEXT[op]}' -> '{OP_TEXT[OP_SWAP[op]]}' in `{short(c)}`"))
        col = column_of(c.left)
        ok, old = scalar_const(c.comparators[0])
        new = pick_value(old, values.get(col, []), rng) if col is not None and ok else None
        if new is not None:
            add("filter-changed", c, setter("comparators.0", ast.Constant(new),
                f"`{short(c.left)}` compared to {new!r} instead of {old!r}"))

    # ---- 4. other-aggregate: method / function / 'agg' string swapped within its family
    for n in nodes:
        if not isinstance(n, ast.Call):
            continue
        a, f = attr_of(n), n.func
        if a in AGG and not (isinstance(f.value, ast.Attribute) and f.value.attr in ("str", "dt")) \
                and not (a == "count" and n.args):
            for b in AGG[a]:
                add("other-aggregate", n, setter("func.attr", b, f"{a} -> {b}"))
        elif isinstance(f, ast.Name) and f.id in ("max", "min"):
            b = "min" if f.id == "max" else "max"
            add("other-aggregate", n, setter("func.id", b, f"builtin {f.id}() -> {b}()"))
        elif isinstance(f, ast.Name) and f.id == "len" and len(n.args) == 1 \
                and isinstance(n.args[0], (ast.Subscript, ast.Attribute)):
            add("other-aggregate", n, setter("", lambda n: ast.Call(ast.Attribute(
                n.args[0], "nunique", ast.Load()), [], []), "len(...) -> .nunique()"))
        if a in AGG_STR_CALLS:
            for c in [c for arg in n.args + [k.value for k in n.keywords] for c in str_consts(arg)]:
                for b in AGG.get(c.value, []) if not c.value.startswith(("n", "idx")) else []:
                    add("other-aggregate", c, setter("value", b, f"aggregate '{c.value}' -> '{b}'"))

    # ---- 5. row-off-by-one: positional pick k -> k+1 (-1 -> -2); label pick i -> (i) + 1
    def label_like(e):  # an int, a name, idxmax(), x.index[k], arithmetic -- never a mask
        return not is_mask(e, mask_names) and (int_const(e) is not None or isinstance(
            e, (ast.Subscript, ast.BinOp, ast.Name)) or attr_of(e) in ("idxmax", "idxmin"))

    for n in nodes:
        if not isinstance(n, ast.Subscript):
            continue
        v, s = n.value, n.slice
        tup = isinstance(s, ast.Tuple) and bool(s.elts)
        first, path = (s.elts[0], "slice.elts.0") if tup else (s, "slice")
        va = v.attr if isinstance(v, ast.Attribute) else attr_of(v)
        k = int_const(first)
        positional = va in ("iloc", "iat") or (not tup and (
            va in ("values", "index", "tolist", "to_list", "unique")
            or (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("list", "sorted"))))
        if positional and k is not None:
            new = k - 1 if k == -1 else k + 1
            add("row-off-by-one", n, setter(path, ast.Constant(new), f"row [{k}] -> [{new}]"))
        elif va in ("loc", "at") and isinstance(v, ast.Attribute) and label_like(first):
            add("row-off-by-one", n, setter(path, lambda e: ast.BinOp(e, ast.Add(), ast.Constant(1)),
                                            f"row label `{short(first)}` -> +1"))

    # ---- 6. head-n: head/tail/nlargest/nsmallest n and [:n] slices -> n+1, n-1 (when >= 1)
    for n in nodes:
        site = None
        if attr_of(n) in ("head", "tail", "nlargest", "nsmallest"):
            kws = [i for i, kw in enumerate(n.keywords) if kw.arg == "n"]
            if n.args and isinstance(n.args[0], ast.Constant) and type(n.args[0].value) is int:
                site, k = "args.0", n.args[0].value
            elif kws and isinstance(n.keywords[kws[0]].value, ast.Constant) \
                    and type(n.keywords[kws[0]].value.value) is int:
                site, k = f"keywords.{kws[0]}.value", n.keywords[kws[0]].value.value
            elif not n.args and not n.keywords and attr_of(n) in ("head", "tail"):
                site, k = "args", 5  # default n
            name = f"{attr_of(n)}()"
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) and n.slice.lower is None \
                and n.slice.step is None and isinstance(n.slice.upper, ast.Constant) \
                and type(n.slice.upper.value) is int and n.slice.upper.value >= 1:
            site, k, name = "slice.upper", n.slice.upper.value, "slice [:n]"
        for d in ([1, -1] if site and k > 1 else [1] if site else []):
            new = [ast.Constant(k + d)] if site == "args" else ast.Constant(k + d)
            add("head-n", n, setter(site, new, f"{name} n {k} -> {k + d}"))

    # ---- 7. sort-flipped: sort_values/sort_index ascending, sorted()/list.sort reverse
    def flip(n, kwname, default):
        kws = [i for i, kw in enumerate(n.keywords) if kw.arg == kwname]
        if not kws:
            return setter("keywords", lambda ks: ks + [ast.keyword(kwname, ast.Constant(not default))],
                          f"added {kwname}={not default}")

        def negate(v):
            if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                return ast.Constant(not v.value)
            if isinstance(v, ast.List) and all(isinstance(e, ast.Constant) for e in v.elts):
                return ast.List([ast.Constant(not e.value) for e in v.elts], ast.Load())
            return ast.UnaryOp(ast.Not(), v)
        return setter(f"keywords.{kws[0]}.value", negate,
                      f"{kwname}={short(n.keywords[kws[0]].value, 20)} flipped")

    for n in nodes:
        if attr_of(n) in ("sort_values", "sort_index"):
            add("sort-flipped", n, flip(n, "ascending", True))
        elif attr_of(n) == "sort" or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                      and n.func.id == "sorted"):
            add("sort-flipped", n, flip(n, "reverse", False))
    return cands


def mutate(req):
    code = req.get("code", "")
    try:
        tree = ast.parse(code)
        base = ast.unparse(tree)
    except Exception:
        return []
    values = req.get("values") or {}
    cleans = any(w in code for w in ("to_numeric", "astype(", ".str.replace", "float(", "int("))
    kinds = column_kinds(req.get("columns") or [], values, cleans)
    seed = req.get("seed", 0)
    cands = find_candidates(tree, kinds, values, random.Random(f"{seed}:values"))
    out, seen = [], {base}
    for kind in KINDS:
        pool = list(cands[kind])
        random.Random(f"{seed}:{kind}").shuffle(pool)  # string seeds are stable across runs
        got = 0
        for idx, fn in pool:
            if got == 2:
                break
            t = ast.parse(code)
            try:
                note = fn(t, list(ast.walk(t))[idx])
                src = ast.unparse(t)
                ast.parse(src)
            except Exception:
                continue
            if src not in seen:
                seen.add(src)
                out.append({"kind": kind, "code": src, "note": note})
                got += 1
    return out


def self_test():
    cols = [{"name": n, "dtype": d} for n, d in [("Nation", "object"), ("Team", "object"),
            ("Gold", "int64"), ("Silver", "int64"), ("Pop", "object"), ("Area", "object")]]
    values = {"Nation": ["France", "Italy", "Spain"], "Team": ["A", "B"], "Gold": [1, 2, 5],
              "Silver": [0, 3], "Pop": ["1,200", "3,400"], "Area": ["12", "40.5"]}
    samples = [
        ("import pandas as pd\nd2 = df[(df['Nation'] == 'France') & (df['Gold'] > 2)]\n"
         "print(d2.sort_values('Gold', ascending=False).head(3)['Nation'].tolist())",
         {"other-column", "filter-dropped", "filter-changed", "head-n", "sort-flipped"}),
        ("total = df.groupby('Nation')['Silver'].sum()\nprint(total.idxmax())\n"
         "print(df.loc[df['Gold'].idxmax(), 'Nation'])\nprint(df.agg({'Gold': 'mean'}))",
         {"other-column", "other-aggregate", "row-off-by-one"}),
        ("df['Pop'] = pd.to_numeric(df['Pop'].str.replace(',', ''))\n"
         "print(df.sort_values(by='Pop').iloc[0]['Nation'])\nprint(sorted(df['Team'].unique())[:2])\n"
         "print(len(df[df.Gold > 1]))\nprint(df.loc[df.Silver >= 3, 'Team'].values[0])",
         {"other-column", "row-off-by-one", "sort-flipped", "head-n", "other-aggregate",
          "filter-dropped", "filter-changed"}),
        ("print(df.query('Gold > 3')['Nation'].count())\nprint(df.nlargest(2, 'Gold').Nation.iloc[-1])",
         {"filter-dropped", "other-aggregate", "head-n", "row-off-by-one", "other-column"}),
    ]
    for code, expect in samples:
        for seed in range(5):
            req = {"code": code, "columns": cols, "values": values, "seed": seed}
            muts = mutate(req)
            assert muts == mutate(req), "not deterministic"
            assert expect <= {m["kind"] for m in muts}, (code, expect - {m["kind"] for m in muts})
            base = ast.unparse(ast.parse(code))
            for m in muts:
                ast.parse(m["code"])
                assert m["code"] != base and m["note"]
            assert len({m["code"] for m in muts}) == len(muts)
            assert all(sum(m["kind"] == k for m in muts) <= 2 for k in KINDS)
    # numeric-looking text columns swap together; the attribute .Nation follows a rename
    muts = mutate({"code": samples[2][0], "columns": cols, "values": values, "seed": 7})
    assert all("'Area'" in m["note"] for m in muts if m["kind"] == "other-column" and "'Pop'" in m["note"])
    muts = mutate({"code": samples[3][0], "columns": cols[:2] + cols[2:3], "values": values, "seed": 0})
    assert any(m["code"].count("Team") == 2 for m in muts if m["kind"] == "other-column"), muts
    # a compared value moves to another value of that column
    notes = [m["note"] for s in range(6) for m in mutate({"code": samples[0][0], "columns": cols,
             "values": values, "seed": s}) if m["kind"] == "filter-changed"]
    assert any("instead of 'France'" in x for x in notes) and any("'>' -> '<'" in x for x in notes)
    assert mutate({"code": "df[", "columns": cols, "values": values, "seed": 1}) == []
    print(f"self-test ok: {len(samples)} programs x 5 seeds")


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--self-test":
    self_test()
elif __name__ == "__main__":
    print(json.dumps(mutate(json.loads(sys.stdin.read()))))
