"""tableminds reward function for verl, calling a `tableminds serve-reward` server.

verl (0.9.1): reward.reward_manager.name=naive reward.custom_reward_function.path=<this file>
reward.custom_reward_function.name=compute_score. The naive manager calls compute_score once
per sample, in a thread of its executor, so samples are scored concurrently.

Environment:
  TABLEMINDS_REWARD_URL         the server, e.g. http://10.0.0.5:8000 (default below)
  TABLEMINDS_REWARD_TOKEN       its bearer token, or
  TABLEMINDS_REWARD_TOKEN_FILE  a file holding it
  TABLEMINDS_REWARD_TIMEOUT     seconds per request (default 120)
  TABLEMINDS_REWARD_ROLE        plan|code|answer, when the labels do not say the role

ground_truth is the label a tableminds export writes: a JSON object string with role,
reference, qtype, qsubtype, tables. A plain string is taken as the reference, with the
other fields read from extra_info. A sample the server refuses for its tables (not in its
store, or a path) scores 0, and the reason is written to stderr. Only the standard library
is used.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000"
LABEL_KEYS = ("role", "qtype", "qsubtype", "tables", "preset", "planFormat")
ATTEMPTS = 3


def _token():
    token = os.environ.get("TABLEMINDS_REWARD_TOKEN", "").strip()
    path = os.environ.get("TABLEMINDS_REWARD_TOKEN_FILE")
    if not token and path:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    if not token:
        raise RuntimeError("set TABLEMINDS_REWARD_TOKEN or TABLEMINDS_REWARD_TOKEN_FILE")
    return token


def _plain(value):
    # Parquet rows reach verl as numpy arrays; JSON wants lists.
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _label(ground_truth, extra_info):
    label = None
    if isinstance(ground_truth, dict):
        label = dict(ground_truth)
    elif isinstance(ground_truth, str):
        try:
            parsed = json.loads(ground_truth)
        except ValueError:
            parsed = None
        label = parsed if isinstance(parsed, dict) else None
    if label is None:
        label = {"reference": ground_truth if isinstance(ground_truth, str) else str(ground_truth)}
    for key in LABEL_KEYS:
        if extra_info and key not in label and extra_info.get(key) is not None:
            label[key] = extra_info[key]
    return json.dumps(label, default=_plain)


def _post(solution_strs, labels):
    base = os.environ.get("TABLEMINDS_REWARD_URL", DEFAULT_URL).rstrip("/")
    role = os.environ.get("TABLEMINDS_REWARD_ROLE")
    url = base + "/reward" + ("/" + role if role else "")
    timeout = float(os.environ.get("TABLEMINDS_REWARD_TIMEOUT", "120"))
    body = json.dumps({"query": list(solution_strs), "labels": labels}).encode("utf-8")
    headers = {"Content-Type": "application/json", "Authorization": "Bearer " + _token()}
    for attempt in range(ATTEMPTS):
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read().decode("utf-8"))
            # A sample refused for its tables scores 0; say why rather than train on it silently.
            for error in reply.get("errors") or []:
                if error:
                    sys.stderr.write("tableminds reward: refused %s\n" % error)
            return reply["rewards"]
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")
            if error.code < 500 or attempt == ATTEMPTS - 1:
                raise RuntimeError("reward server %s: %s" % (error.code, detail)) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            if attempt == ATTEMPTS - 1:
                raise RuntimeError("reward server unreachable at %s: %s" % (url, error)) from None
        time.sleep(1 + attempt)
    raise RuntimeError("unreachable")


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's per-sample reward: a float.

    verl passes more keywords when a reward model runs beside it (reward_router_address,
    reward_model_tokenizer) and the config's reward.custom_reward_function.reward_kwargs; the
    server does not use them.
    """
    return float(_post([solution_str], [_label(ground_truth, extra_info)])[0])
