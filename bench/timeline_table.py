#!/usr/bin/env python3
"""The table of the device scripts' time lines (bench/device_io4.sh,
bench/device_chain5.sh): FILE holds sections "=== NAME VARIANT..." each
followed by one bench/wall_split.py run of those variants with
TFLITE_GLES_X_TIMELINE=1; per variant its second time-line report (the
first is the warm-up's), in µs from the invoke's start, and wall_split's
median invoke (ms). With LABEL (a regular expression), also the GPU time
of the last dispatch whose label matches it. "CPU fence": when the
readback's fence wait returned (the CPU's readback work follows).

    python3 bench/timeline_table.py FILE [LABEL]
"""
import re, sys
label = sys.argv[2] if len(sys.argv) > 2 else None
sections = re.split(r"^=== ", open(sys.argv[1]).read(), flags=re.M)[1:]


def kernel(report):
    found = re.findall(rf"^.*(?:{label}).* (\S+) us, issued", report, re.M)
    return found[-1] if found else "-"


for sec in sections:
    head, body = sec.split("\n", 1)
    names = [v.split(":")[0] for v in head.split()[1:]]
    print(f"{head.split()[0]}: " + "; ".join(sorted(set(re.findall(r"crosses in \d+ row bands \(\w+\)", body)))))
    reports = re.split(r"^.*time line, mean.*$", body, flags=re.M)
    heads = re.findall(r"time line, mean.*", body)[len(names):]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| (\S+) \| \S+ \| (\S+) \|", body, re.M)}
    print("| variant | CPU up | GPU past up | up conv done | rb conv us | GPU done | CPU fence | "
          "CPU done | invoke |"
          + (" kernel us |" if label else ""))
    for name, h, rep in zip(names, heads, reports[len(names) + 1:]):
        num = lambda pat, t=h: (re.search(pat, t) or [None, "-"])[1]
        up = re.search(r"upload conversion +\S+ us, issued at +\S+, done at +(\S+)", rep)
        rb = re.search(r"readback conversion +(\S+) us", rep)
        print(f"| {name} | {num(r'CPU uploaded ([0-9.]+)')} | {num(r'past the uploads ([0-9.]+)')} | "
              f"{up.group(1) if up else '-'} | {rb.group(1) if rb else '-'} | "
              f"{num(r'finished the last dispatch ([0-9.]+)')} | {num(r'readback fence ([0-9.]+)')} | "
              f"{num(r'done ([0-9.]+);')} | "
              f"{rows.get(name, '-')} |" + (f" {kernel(rep)} |" if label else ""))
