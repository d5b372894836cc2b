"""The Java section of bench/peers.sh: kafkabench driving Apache Kafka's Java client
(`client = java`, its worker in clients/java) against Kafka's own ProducerPerformance
(kafka-producer-perf-test, from scripts/kafka-local's jars: the same kafka-clients release),
same broker, same settings, same records, interleaved. peers.py runs it through its Bench
(process runner, topic commands, output directory).

Both send N records of SIZE bytes at an unlimited rate, from one payload file of LINES lines of
random uppercase letters (`--java-lines`): ProducerPerformance takes a line at random per record
(`--payload-file`), kafkabench the lines in turn (`payload = file(…)`), so both hand the client
the same bytes and a codec sees the same entropy. (With `--record-size` instead,
ProducerPerformance draws a new random letter for every byte of every record, about 10 µs of CPU
per 1 KiB record that kafkabench would not spend; and a constant payload would let lz4 match
every record of a batch against the one before it.) Throughput is
what each reports (ProducerPerformance: records over the time to the last ack; kafkabench:
acknowledged records over first send → last ack). CPU is the kernel's (wait4) for the whole
process tree: ProducerPerformance's JVM, and kafkabench with its worker's JVM (its child, reaped
before it exits), start-up included on both sides.

Method and results: bench/README.md, "The Java client".
"""

import json
import os
import random
import re

KB = "kafkabench (java)"
PERF = "ProducerPerformance"
TOOLS = [KB, PERF]


class JavaSide:
    def __init__(self, b, common, payload_text):
        self.b = b
        self.args = b.args
        self.common = common
        self.payload_text = payload_text
        self.files = {}

    def payload_file(self, size):
        """The records both tools send: --java-lines lines of `size` random letters A-Z."""
        if size not in self.files:
            path = os.path.abspath(os.path.join(self.b.out, f"java-payload-{size}.txt"))
            rng = random.Random(20261205 + size)
            with open(path, "w") as f:
                for _ in range(self.args.java_lines):
                    f.write("".join(chr(65 + rng.randrange(26)) for _ in range(size)) + "\n")
            self.files[size] = path
        return self.files[size]

    def props(self, codec):
        return dict(self.common, **{"compression.type": codec})

    def kafkabench(self, label, size, codec, n):
        body = "\n    ".join(f"{k} = {v}" for k, v in self.props(codec).items())
        path = os.path.join(self.b.out, f"{label}.kbs")
        with open(path, "w") as f:
            f.write(
                f'scenario "peers-java" {{\n'
                f'  cluster {{ bootstrap = "{self.b.bootstrap}" }}\n'
                f'  topic "peers-java" {{ partitions = {self.args.partitions} }}\n'
                f"  producer {{\n    client = java\n    {body}\n  }}\n"
                f"  workload {{\n    messages = {n}\n    rate = unlimited\n"
                f'    payload = file("{self.payload_file(size)}")\n  }}\n'
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
                "wall": wall, "ack": r.get("ack")}

    def perf_test(self, label, size, codec, n):
        t = self.b.topic("java-pp")
        p = self.b.tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                        self.b.bootstrap, "--create", "--topic", t, "--partitions",
                        str(self.args.partitions), "--replication-factor", "1")
        if p.returncode != 0:
            raise SystemExit(f"cannot create topic {t}: {p.stderr.strip()}")
        cmd = [self.b.kafka_local, "tool", "org.apache.kafka.tools.ProducerPerformance",
               "--topic", t, "--num-records", str(n), "--payload-file", self.payload_file(size),
               "--throughput", "-1", "--producer-props", f"bootstrap.servers={self.b.bootstrap}",
               *[f"{k}={v}" for k, v in self.props(codec).items()]]
        try:
            code, out, cpu, rss, wall = self.b.run(cmd)
        finally:
            self.b.delete_topic(t)
        m = re.search(r"(\d+) records sent, ([\d.]+) records/sec", out)
        if code != 0 or not m:
            self.b.log(out[-3000:])
            raise SystemExit(f"ProducerPerformance failed (exit {code}) on {label}")
        return {"msgs": int(m.group(1)), "msg_s": float(m.group(2)), "cpu": cpu, "rss": rss,
                "wall": wall}

    def run(self):
        configs = [(int(c.split(":")[0]), c.split(":")[1]) for c in self.args.java_config]

        def one(t, label, size, codec):
            n = self.args.small if size < 1000 else self.args.large
            if t == KB:
                return self.kafkabench(label, size, codec, n)
            return self.perf_test(label, size, codec, n)

        self.b.interleaved("java", "java", configs, TOOLS, one)


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if xs else float("nan")


def report(rows, args):
    rs_all = [r for r in rows if r["section"] == "java"]
    if not rs_all:
        return []
    lines = [f"\n### The Java client: kafkabench's worker against ProducerPerformance "
             f"(medians of {args.reps} interleaved runs; spread = min–max)\n",
             "| record | codec | tool | msg/s (median) | msg/s spread | CPU s per M msgs | "
             "CPU spread | peak RSS MiB | load (1 min) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    verdict = []
    for size, codec in sorted({(r["size"], r["codec"]) for r in rs_all}):
        by = {}
        for t in TOOLS:
            rs = [r for r in rs_all if r["size"] == size and r["codec"] == codec and r["tool"] == t]
            if not rs:
                continue
            ms = [r["msg_s"] for r in rs]
            cpu = [r["cpu"] / (r["msgs"] / 1e6) for r in rs]
            by[t] = (med(ms), med(cpu))
            lines.append(f"| {size} B | {codec} | {t} | {med(ms):,.0f} | "
                         f"{min(ms):,.0f}–{max(ms):,.0f} | {med(cpu):.3f} | "
                         f"{min(cpu):.3f}–{max(cpu):.3f} | {med([r['rss'] for r in rs]):.0f} | "
                         f"{med([r['load'] for r in rs]):.1f} |")
        if KB in by and PERF in by:
            kb, pp = by[KB], by[PERF]
            verdict.append(f"| {size} B | {codec} | {kb[0] / pp[0]:.2f}× | {kb[1] / pp[1]:.2f}× |")
    lines.append("\nkafkabench (java) relative to ProducerPerformance (medians; goal: "
                 "throughput ≥ 0.95×, CPU per record ≤ 1.05×):\n")
    lines.append("| record | codec | throughput | CPU per record |")
    lines.append("|---|---|---:|---:|")
    lines.extend(verdict)
    return lines
