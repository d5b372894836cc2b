#!/usr/bin/env python3
"""Apache Otava on the very series kafkabench searched (bench/changepoint.sh).

Reads the JSON lines that `noise_and_shifts_for_the_record` wrote (KB_CHANGEPOINT_EXPORT):
each series with the change points kafkabench found in it. Runs Otava's default analysis
(`compute_change_points`: windows of 50 points, a t-test at p < 0.001, no minimum magnitude)
on every figure, and prints both tools' rates side by side, from the same file.

usage: otava_compare.py EXPORT   (with apache-otava 0.8.0 importable)
"""
import json
import math
import sys
import time
from collections import defaultdict

from otava.analysis import compute_change_points


def otava(values):
    # Otava raises ValueError on a numpy array: a list of floats.
    found, _ = compute_change_points([float(v) for v in values])
    return [c.index for c in found]


def rate(k, n):
    p = k / n
    se = math.sqrt(p * (1 - p) / n)
    return f"{100 * p:.2f} % ({k} of {n}, ± {200 * se:.2f} % at 2 SE)"


def main(path):
    family = {"n": 0, "kb": 0, "ot": 0}
    noise = {"n": 0, "kb": 0, "ot": 0}
    # (n, σ) → counts of: series; found alone within ±1; any change point within ±1; change
    # points more than 1 away from the shift.
    shifts = defaultdict(lambda: defaultdict(int))
    seconds = 0.0
    with open(path) as f:
        for line in f:
            s = json.loads(line)
            if s["case"] == "family":
                t = time.perf_counter()
                ot = [otava(v) for v in s["figures"]]
                seconds += time.perf_counter() - t
                family["n"] += 1
                family["kb"] += any(s["kb"])
                family["ot"] += any(ot)
            elif s["case"] == "noise":
                t = time.perf_counter()
                ot = otava(s["values"])
                seconds += time.perf_counter() - t
                noise["n"] += 1
                noise["kb"] += bool(s["kb"])
                noise["ot"] += bool(ot)
            else:
                t = time.perf_counter()
                ot = otava(s["values"])
                seconds += time.perf_counter() - t
                at = s["at"]
                c = shifts[(s["n"], s["sigmas"])]
                c["series"] += 1
                for tool, found in (("kb", s["kb"]), ("kb8", s["kb8"]), ("ot", ot)):
                    near = [i for i in found if abs(i - at) <= 1]
                    c[tool + "_alone"] += len(found) == 1 and len(near) == 1
                    c[tool + "_any"] += bool(near)
                    c[tool + "_false"] += len(found) - len(near)
    print(f"Otava's default analysis: {seconds:.1f} s for every series")
    if family["n"]:
        print("pure noise, 8 figures × 40 results, any change point in any figure:")
        print(f"  kafkabench {rate(family['kb'], family['n'])}")
        print(f"  Otava      {rate(family['ot'], family['n'])}")
    if noise["n"]:
        print("pure noise, one figure × 100 results, any change point:")
        print(f"  kafkabench {rate(noise['kb'], noise['n'])}")
        print(f"  Otava      {rate(noise['ot'], noise['n'])}")
    if shifts:
        print("one shift of kσ: found alone within ±1 | a change point within ±1 | change "
              "points elsewhere per series")
        print("   n   k  kafkabench α          kafkabench α/8        Otava")
        for (n, k), c in sorted(shifts.items()):
            m = c["series"]
            cells = []
            for tool in ("kb", "kb8", "ot"):
                cells.append(
                    f"{100 * c[tool + '_alone'] / m:5.1f} {100 * c[tool + '_any'] / m:5.1f} "
                    f"{c[tool + '_false'] / m:5.3f}"
                )
            print(f"  {n:3d} {k:3.0f}  " + "   ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
