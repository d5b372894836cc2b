"""The franz-go section of bench/peers.sh: kafkabench driving franz-go (`client = franz-go`,
its worker in clients/franz-go) against franz-go's own benchmark (bench/franz-go, a copy of
twmb/franz-go's examples/bench), same broker, same settings, same records, interleaved.
peers.py runs it through its Bench (process runner, topic commands, output directory).

franz-go's benchmark produces until it is killed and prints its rate once a second; it is
stopped right after its N-th line. Its throughput is the mean of lines 2..N (the first holds
the connection's start); its CPU is the kernel's (wait4) for the whole process over all the
records its lines count, so its start-up counts against it as kafkabench's does against
kafkabench (whose CPU is its own process and the worker's, its child).

Method and results: bench/README.md, "franz-go".
"""

import json
import os
import re
import signal
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(REPO, "bench", "franz-go")
BENCH_BIN = os.path.join(REPO, "bench", "build", "franz-go-bench")
FIND_GO = os.path.join(REPO, "clients", "franz-go", "find-go")

KB = "kafkabench (franz-go)"
STATIC = "franz-go bench -static-record"
FRESH = "franz-go bench"
TOOLS = [KB, STATIC, FRESH]

RATE_LINE = re.compile(r"^([\d.]+) MiB/s; ([\d.]+)k records/s$", re.M)


def static_value(size):
    """The bytes franz-go's benchmark sends with -static-record: formatValue(0, …), "0 "
    repeated to the record's size."""
    return ("0 " * size)[:size]


def max_buffered(size):
    """franz-go's benchmark buffers up to 250 MiB of records (kgo.MaxBufferedRecords)."""
    return (250 << 20) // size + 1


class FranzSide:
    def __init__(self, b):
        self.b = b
        self.args = b.args

    def build(self):
        go = subprocess.run([FIND_GO], capture_output=True, text=True)
        if go.returncode != 0:
            raise SystemExit(go.stderr.strip())
        os.makedirs(os.path.dirname(BENCH_BIN), exist_ok=True)
        p = subprocess.run([go.stdout.strip(), "build", "-trimpath", "-o", BENCH_BIN, "."],
                           cwd=BENCH_DIR, capture_output=True, text=True,
                           env=dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local"))
        if p.returncode != 0:
            raise SystemExit(f"cannot build franz-go's benchmark: {p.stderr.strip()}")

    def settings(self, codec):
        """The producer settings both get: franz-go's benchmark flags, and the same as the
        Kafka property names kafkabench's franz-go table maps to those options."""
        return {
            "flags": ["-compression", codec, "-acks", "-1", "-batch-max-bytes", "1000000",
                      "-linger", f"{self.args.franz_linger_ms}ms"],
            "props": {"acks": "all", "compression.type": codec, "batch.size": "1000000",
                      "linger.ms": str(self.args.franz_linger_ms)},
        }

    def kafkabench(self, label, size, codec):
        s = self.settings(codec)
        props = dict(s["props"], **{"max.buffered.records": str(max_buffered(size))})
        body = "\n    ".join(f"{k} = {v}" for k, v in props.items())
        path = os.path.join(self.b.out, f"{label}.kbs")
        with open(path, "w") as f:
            f.write(
                f'scenario "peers-franz-go" {{\n'
                f'  cluster {{ bootstrap = "{self.b.bootstrap}" }}\n'
                f'  topic "peers-fg" {{ partitions = {self.args.partitions} }}\n'
                f"  producer {{\n    client = franz-go\n    {body}\n  }}\n"
                f"  workload {{\n    duration = {self.args.franz_secs}s\n    rate = unlimited\n"
                f'    payload = constant("{static_value(size)}")\n  }}\n'
                f"}}\n")
        js = os.path.join(self.b.out, f"{label}.json")
        code, out, cpu, rss, wall = self.b.run(
            [self.args.kafkabench, "run", path, "--quiet", "--json", js])
        if code != 0:
            self.b.log(out[-3000:])
            raise SystemExit(f"kafkabench failed (exit {code}) on {label}")
        with open(js) as f:
            r = json.load(f)["runs"][0]
        return {"msgs": r["sent"], "msg_s": r["throughput_msgs"], "cpu": cpu, "rss": rss,
                "wall": wall}

    def bench(self, label, size, codec, static):
        t = self.b.topic("fg")
        p = self.b.tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                        self.b.bootstrap, "--create", "--topic", t, "--partitions",
                        str(self.args.partitions), "--replication-factor", "1")
        if p.returncode != 0:
            raise SystemExit(f"cannot create topic {t}: {p.stderr.strip()}")
        cmd = [BENCH_BIN, "-brokers", self.b.bootstrap, "-topic", t, "-pprof", "",
               "-record-bytes", str(size), *self.settings(codec)["flags"]]
        if static:
            cmd.append("-static-record")
        lines = self.args.franz_secs + 1
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rates, text = [], []
        try:
            for line in p.stdout:
                text.append(line)
                m = RATE_LINE.match(line.strip())
                if m:
                    rates.append(float(m.group(2)) * 1000)
                    if len(rates) >= lines:
                        break
                if time.monotonic() - start > self.args.timeout:
                    break
        finally:
            p.send_signal(signal.SIGKILL)
            _, _, ru = os.wait4(p.pid, 0)
            p.stdout.close()
            self.b.delete_topic(t)
        wall = time.monotonic() - start
        if len(rates) < lines:
            self.b.log("".join(text[-20:]))
            raise SystemExit(f"franz-go's benchmark printed {len(rates)} rates on {label}")
        total = sum(rates)
        return {"msgs": total, "msg_s": sum(rates[1:]) / (len(rates) - 1),
                "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024.0, "wall": wall}

    def run(self):
        self.build()
        configs = [(int(c.split(":")[0]), c.split(":")[1]) for c in self.args.franz_config]

        def one(t, label, size, codec):
            if t == KB:
                return self.kafkabench(label, size, codec)
            return self.bench(label, size, codec, static=(t == STATIC))

        self.b.interleaved("franz-go", "fg", configs, TOOLS, one)


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if xs else float("nan")


def report(rows, args):
    fg = [r for r in rows if r["section"] == "franz-go"]
    if not fg:
        return []
    lines = [f"\n### franz-go: kafkabench's worker against franz-go's own benchmark "
             f"(medians of {args.reps} interleaved runs of {args.franz_secs} s; spread = min–max)\n",
             "| record | codec | tool | msg/s (median) | msg/s spread | CPU s per M msgs | "
             "CPU spread | peak RSS MiB | load (1 min) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    verdict = []
    for size, codec in sorted({(r["size"], r["codec"]) for r in fg}):
        by = {}
        for t in TOOLS:
            rs = [r for r in fg if r["size"] == size and r["codec"] == codec and r["tool"] == t]
            if not rs:
                continue
            ms = [r["msg_s"] for r in rs]
            cpu = [r["cpu"] / (r["msgs"] / 1e6) for r in rs]
            by[t] = (med(ms), med(cpu))
            lines.append(f"| {size} B | {codec} | {t} | {med(ms):,.0f} | "
                         f"{min(ms):,.0f}–{max(ms):,.0f} | {med(cpu):.3f} | "
                         f"{min(cpu):.3f}–{max(cpu):.3f} | {med([r['rss'] for r in rs]):.0f} | "
                         f"{med([r['load'] for r in rs]):.1f} |")
        kb = by.get(KB)
        for ref in (STATIC, FRESH):
            if kb and ref in by:
                verdict.append(f"| {size} B | {codec} | {ref} | {kb[0] / by[ref][0]:.2f}× | "
                               f"{kb[1] / by[ref][1]:.2f}× |")
    lines.append("\nkafkabench (franz-go) relative to franz-go's benchmark (medians; goal: "
                 "throughput ≥ 0.95×, CPU per record ≤ 1.05×):\n")
    lines.append("| record | codec | against | throughput | CPU per record |")
    lines.append("|---|---|---|---:|---:|")
    lines.extend(verdict)
    return lines
