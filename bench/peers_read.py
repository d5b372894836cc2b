"""The read side of bench/peers.sh: one backlog drained by three group consumers, and what the
verification consumer costs the producers. peers.py runs these sections through its Bench
(its process runner, topic commands and output directory); this module imports nothing of it.

Method and results: bench/README.md, "The read side".
"""

import json
import os
import re
import statistics

READERS = ["kafkabench", "perf-test", "rdkafka_perf"]
# With --baseline: another kafkabench build reads the same backlog in the same repetitions.
BASELINE = "kafkabench (baseline)"
# kafkabench draining the backlog it wrote itself (`backlog = N`): every record verified.
OWN = "kafkabench, own backlog"

# librdkafka consumer settings rdkafka_performance sets for itself (rdkafka_performance.c,
# main): kafkabench's consumer is given the same, so the two librdkafka readers differ only in
# their code. The Java consumer keeps its defaults (it has no such queue setting).
RDKAFKA_PERF_CONSUMER = {
    "queued.min.messages": "1000000",
    "session.timeout.ms": "6000",
    "auto.offset.reset": "earliest",
}

# ConsumerPerformance's one result line (Kafka 4.1): start, end, MB, MB/s, records, records/s,
# rebalance ms, fetch ms, fetch MB/s, fetch records/s. The fetch figures leave out the group
# join, as the other two tools' rates do.
PERF_TEST_LINE = re.compile(
    r"^[\d-]+ [\d:]+, [\d-]+ [\d:]+, ([\d.]+), ([\d.]+), (\d+), ([\d.]+), (\d+), (\d+), "
    r"([\d.]+), ([\d.]+)\s*$", re.M)
RDKAFKA_PERF_LINE = re.compile(
    r"% (\d+) messages \((\d+) bytes\) consumed in (\d+)ms: (\d+) msgs/s")


def props_block(props, indent="    "):
    return "\n".join(f"{indent}{k} = {v}" for k, v in props.items())


class ReadSide:
    """The two sections, run by `b` (peers.Bench)."""

    def __init__(self, b, common_producer, payload):
        self.b = b
        self.args = b.args
        self.common = common_producer
        self.payload = payload
        self.groups = []

    def kbs(self, label, body):
        path = os.path.join(self.b.out, f"{label}.kbs")
        with open(path, "w") as f:
            f.write(f'scenario "{label}" {{\n'
                    f'  cluster {{ bootstrap = "{self.b.bootstrap}" }}\n{body}}}\n')
        return path

    def kafkabench(self, label, path, *extra, binary=None):
        js = os.path.join(self.b.out, f"{label}.json")
        code, out, cpu, rss, wall = self.b.run(
            [binary or self.b.kafkabench_bin, "run", path, "--quiet", "--json", js, *extra])
        if code != 0:
            self.b.log(out[-3000:])
            raise SystemExit(f"kafkabench failed (exit {code}) on {label}")
        with open(js) as f:
            return json.load(f)["runs"][0], cpu, rss, wall

    # --- consume: one backlog, three readers ----------------------------------------------

    def consumer_block(self, who):
        props = dict(RDKAFKA_PERF_CONSUMER, **{"group.id": f'"{self.group(who)}"'})
        return f"  consumer {{\n{props_block(props)}\n  }}\n"

    def write_backlog(self, label, n):
        """kafkabench's own backlog scenario writes the backlog (`backlog = n`: stamped records,
        written before its clock starts) and drains it, verifying every record, into a topic
        kept for the three readers. Returns the topic's name and the drain's figures (its CPU
        is not the drain's alone: the process wrote the backlog too)."""
        name = self.b.topic("backlog")
        path = self.kbs(label, (
            f'  topic "{name}" {{ partitions = {self.args.partitions} }}\n'
            f"  producer {{\n{props_block(self.common)}\n  }}\n"
            + self.consumer_block("kbw")
            + f"  workload {{\n    messages = 0\n    backlog = {n}\n    consumers = 1\n"
            f"    payload = {self.payload}\n  }}\n"))
        # kafkabench suffixes the run id to a topic it creates; the name is already unique.
        r, _, rss, wall = self.kafkabench(label, path, "--keep-topics", "--run-id", "w")
        row = kafkabench_row(r, None, rss, wall)
        if row["msgs"] != n:
            raise SystemExit(f"the backlog writer read {row['msgs']:,} of {n:,} records back")
        return f"{name}-w", row

    def read_kafkabench(self, label, topic, n, binary=None):
        path = self.kbs(label, (
            f'  topic "{topic}" {{ existing = true }}\n'
            + self.consumer_block("kb")
            + "  workload {\n    messages = 0\n    backlog = existing\n    consumers = 1\n  }\n"))
        return kafkabench_row(*self.kafkabench(label, path, binary=binary))

    def read_baseline(self, label, topic, n):
        return self.read_kafkabench(label, topic, n, binary=self.args.baseline)

    def read_perf_test(self, label, topic, n):
        group = self.group("pt")
        code, out, cpu, rss, wall = self.b.run([
            self.b.kafka_local, "tool", "org.apache.kafka.tools.ConsumerPerformance",
            "--bootstrap-server", self.b.bootstrap, "--topic", topic, "--messages", str(n),
            "--group", group, "--timeout", "30000"])
        m = PERF_TEST_LINE.search(out)
        if code != 0 or not m:
            self.b.log(out[-3000:])
            raise SystemExit(f"ConsumerPerformance failed (exit {code}) on {label}")
        msgs, fetch_ms = int(m.group(3)), int(m.group(6))
        return {"msgs": msgs, "bytes": round(float(m.group(1)) * 1024 * 1024),
                "msg_s": float(m.group(8)), "drain_secs": fetch_ms / 1000.0,
                "join_ms": int(m.group(5)), "cpu": cpu, "rss": rss, "wall": wall}

    def read_rdkafka_perf(self, label, topic, n):
        group = self.group("rk")
        code, out, cpu, rss, wall = self.b.run([
            self.args.rdkafka_performance, "-C", "-G", group, "-t", topic,
            "-b", self.b.bootstrap, "-c", str(n), "-q"])
        m = RDKAFKA_PERF_LINE.search(out)
        if code != 0 or not m:
            self.b.log(out[-3000:])
            raise SystemExit(f"rdkafka_performance -C failed (exit {code}) on {label}")
        return {"msgs": int(m.group(1)), "bytes": int(m.group(2)), "msg_s": float(m.group(4)),
                "drain_secs": int(m.group(3)) / 1000.0, "cpu": cpu, "rss": rss, "wall": wall}

    def group(self, who):
        self.groups.append(f"peers-{who}-{os.getpid()}-{len(self.groups) + 1}")
        return self.groups[-1]

    def consume(self):
        n = self.args.backlog
        readers = {"kafkabench": self.read_kafkabench, "perf-test": self.read_perf_test,
                   "rdkafka_perf": self.read_rdkafka_perf, BASELINE: self.read_baseline}
        try:
            for rep in range(self.args.reps):
                load = self.b.wait_quiet()
                topic, own = self.write_backlog(f"cons-write-{rep}", n)
                own.update(section="consume", tool=OWN, rep=rep, backlog=n, load=load)
                self.b.rows.append(own)
                self.b.log(f"cons-write-{rep}: written, then drained at {own['msg_s']:,.0f} "
                           f"records/s, verified")
                try:
                    chosen = [t for t in READERS if t in self.args.readers]
                    if self.args.baseline and "kafkabench" in chosen:
                        chosen.insert(chosen.index("kafkabench") + 1, BASELINE)
                    k = rep % len(chosen)
                    order = chosen[k:] + chosen[:k]
                    for t in order:
                        label = f"cons-{t.replace(' (baseline)', '-baseline')}-{rep}"
                        r = readers[t](label, topic, n)
                        if r["msgs"] != n:
                            raise SystemExit(f"{label} read {r['msgs']:,} of {n:,} records")
                        r.update(section="consume", tool=t, rep=rep, backlog=n, load=load)
                        self.b.rows.append(r)
                        self.b.log(f"{label}: {r['msg_s']:,.0f} records/s, "
                                   f"{r['cpu'] / (n / 1e6):.2f} CPU s/M, {r['rss']:.0f} MiB, "
                                   f"{r['wall']:.1f} s")
                        self.b.save()
                finally:
                    self.b.delete_topic(topic)
        finally:
            self.delete_groups()

    def delete_groups(self):
        """The Java and rdkafka_performance groups commit offsets, so they outlive the run."""
        if self.groups:
            self.b.tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                        "--bootstrap-server", self.b.bootstrap, "--delete",
                        *[x for g in self.groups for x in ("--group", g)])
            self.groups = []

    # --- verifier: the producers with and without `consumer { }` -----------------------------

    def verifier(self):
        n = self.args.verify_messages
        builds = [("current", self.b.kafkabench_bin)]
        if self.args.baseline:
            builds.append(("baseline", self.args.baseline))
        runs = [(b, v) for b in builds for v in ["without", "with"]]
        for rep in range(self.args.reps):
            k = rep % len(runs)
            for (build, binary), v in runs[k:] + runs[:k]:
                label = f"verify-{build}-{v}-{rep}"
                path = self.kbs(label, (
                    f'  topic "peers-verify" {{ partitions = {self.args.partitions} }}\n'
                    f"  producer {{\n{props_block(self.common)}\n  }}\n"
                    + ("  consumer { }\n" if v == "with" else "")
                    + f"  workload {{\n    messages = {n}\n    rate = unlimited\n"
                    f"    producers = 2\n    payload = {self.payload}\n  }}\n"))
                r, cpu, rss, wall = self.kafkabench(label, path, "--interval", "10ms",
                                                    binary=binary)
                row = {"section": "verifier", "build": build, "consumer": v, "rep": rep,
                       "msgs": r["acked"],
                       "msg_s": r["throughput_msgs"], "elapsed": r["elapsed_secs"],
                       "cpu": cpu, "rss": rss, "wall": wall,
                       **last_ack_and_read(r.get("series") or {})}
                if v == "with":
                    row["e2e_p50_ms"] = (r.get("e2e") or {}).get("p50_ms")
                    d = r.get("delivery") or {}
                    row["lost"] = d.get("lost")
                self.b.rows.append(row)
                gap = row.get("read_after_ack")
                self.b.log(f"{label}: acks {row['msg_s']:,.0f}/s, wall {wall:.2f} s"
                           + (f", last read {gap:.2f} s after the last ack" if gap is not None
                              else ""))
                self.b.save()


def kafkabench_row(r, cpu, rss, wall):
    """`consume.throughput` (first record read → last, as rdkafka_performance times its
    reading), and the records over `drain.time` (the clock's start → the last record: the wait
    for the first record included), which any build reports the same way."""
    c = r.get("consume") or {}
    n, drain = c.get("records", 0), c.get("drain_secs")
    return {"msgs": n, "bytes": c.get("bytes", 0),
            "msg_s": c.get("throughput_msgs", 0.0), "drain_secs": drain,
            "drain_msg_s": n / drain if n and drain else None,
            "cpu": cpu, "rss": rss, "wall": wall}


def last_ack_and_read(series):
    """The last ack and the last read, in seconds since the measured phase began, from the time
    series: an interval counts what was acked (read) in it, and the last one ends with the run's
    last record, so with 10 ms intervals both are known to 10 ms."""
    pts = series.get("points") or []

    def end_of_last(field):
        hit = [p for p in pts if (p.get(field) or 0) > 0]
        if not hit:
            return None
        p = hit[-1]
        return p["t_secs"] + (p.get("span_secs") or series["interval_secs"])

    ack, read = end_of_last("acked"), end_of_last("consumed")
    out = {"last_ack": ack, "last_read": read}
    if ack is not None and read is not None:
        out["read_after_ack"] = read - ack
        first = next(p["t_secs"] for p in pts if (p.get("consumed") or 0) > 0)
        out["read_rate"] = sum(p.get("consumed") or 0 for p in pts) / max(read - first, 1e-3)
    return out


# --- the report ------------------------------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def span(xs, spec):
    xs = [x for x in xs if x is not None]
    return f"{format(min(xs), spec)}–{format(max(xs), spec)}" if xs else "-"


def verifying_vs_plain(cons):
    """Per repetition: the verifying read of the run's own backlog against the plain group
    read of the same records (kafkabench both), and the 1-minute load average before it."""
    reps = sorted({r["rep"] for r in cons})
    pairs = []
    for rep in reps:
        own = [r for r in cons if r["rep"] == rep and r["tool"] == OWN]
        plain = [r for r in cons if r["rep"] == rep and r["tool"] == "kafkabench"]
        if own and plain:
            pairs.append((rep, own[0], plain[0]))
    if not pairs:
        return []
    lines = ["\nThe verifying read (own backlog, every record's stamp checked) against the plain "
             "group read of the same records, per repetition:\n",
             "| rep | load avg before | plain read, records/s | verifying read, records/s | "
             "verifying ÷ plain |",
             "|---:|---:|---:|---:|---:|"]
    ratios = []
    for rep, own, plain in pairs:
        ratio = own["msg_s"] / plain["msg_s"] if plain["msg_s"] else None
        ratios.append(ratio)
        lines.append(f"| {rep + 1} | {fmt(own.get('load'), '.2f')} | {plain['msg_s']:,.0f} | "
                     f"{own['msg_s']:,.0f} | {fmt(ratio, '.2f')} |")
    plain_med = med([p["msg_s"] for _, _, p in pairs])
    own_med = med([o["msg_s"] for _, o, _ in pairs])
    loads = [o.get("load") for _, o, _ in pairs if o.get("load") is not None]
    lines.append(f"\nMedian of the same-repetition ratios: {fmt(med(ratios), '.2f')}× "
                 f"({span(ratios, '.2f')}); ratio of the medians: "
                 f"{own_med / plain_med:.2f}× (goal ≥ 0.9×); load average before the "
                 f"repetitions {span(loads, '.2f')}.")
    return lines


def report(rows, args):
    lines = []
    cons = [r for r in rows if r["section"] == "consume"]
    if cons:
        n = cons[0]["backlog"]
        lines.append(f"\n### Draining a backlog of {n:,} records, one group consumer per tool "
                     f"(medians of {args.reps} interleaved runs; spread = min–max)\n")
        lines.append("| tool | records/s (median) | records/s spread | MB/s | "
                     "CPU s per M records | CPU spread | peak RSS MiB | process wall s | "
                     "records / drain.time |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        by = {}
        for t in READERS + [BASELINE, OWN]:
            rs = [r for r in cons if r["tool"] == t]
            if not rs:
                continue
            rate = [r["msg_s"] for r in rs]
            cpu = [r["cpu"] / (r["msgs"] / 1e6) for r in rs if r["cpu"] is not None]
            by[t] = (med(rate), med(cpu))
            mb = med([r["msg_s"] * r["bytes"] / r["msgs"] / 1e6 for r in rs])
            lines.append(f"| {t} | {med(rate):,.0f} | {span(rate, ',.0f')} | {fmt(mb, '.1f')} | "
                         f"{fmt(med(cpu), '.2f')} | {span(cpu, '.2f')} | "
                         f"{med([r['rss'] for r in rs]):.0f} | "
                         f"{med([r['wall'] for r in rs]):.2f} | "
                         f"{fmt(med([r.get('drain_msg_s') for r in rs]), ',.0f')} |")
        lines.append("\nRead rate: each tool's own figure. kafkabench's is `consume.throughput`, "
                     "first record read → last, as rdkafka_performance times its reading; "
                     "\"records / drain.time\" times kafkabench from its clock's start instead "
                     "(the wait for the first record included).")
        if OWN in by:
            lines.append(f"\n\"{OWN}\" is the run that wrote the backlog (`backlog = {n}`) and "
                         "drained it verifying every record; its CPU and wall time include the "
                         "writing, so only its read rate compares.")
        kb, pt, rk = by.get("kafkabench"), by.get("perf-test"), by.get("rdkafka_perf")
        if kb:
            lines.append("\nkafkabench relative to its peers (medians; goal: read rate ≥ 0.95× "
                         "and CPU per record ≤ 1.15× rdkafka_performance -C):\n")
            lines.append("| read rate vs perf-test | read rate vs rdkafka_perf | "
                         "CPU per record vs rdkafka_perf |")
            lines.append("|---:|---:|---:|")
            lines.append((f"| {kb[0] / pt[0]:.2f}× " if pt else "| - ")
                         + (f"| {kb[0] / rk[0]:.2f}× | {kb[1] / rk[1]:.2f}× |" if rk else "| - | - |"))
        lines.extend(verifying_vs_plain(cons))
        base = by.get(BASELINE)
        if kb and base and rk:
            lines.append(f"| (baseline) {base[0] / pt[0]:.2f}× " if pt else "| (baseline) - ")
            lines[-1] += f"| {base[0] / rk[0]:.2f}× | {base[1] / rk[1]:.2f}× |"
    ver = [r for r in rows if r["section"] == "verifier"]
    if ver:
        n = ver[0]["msgs"]
        lines.append(f"\n### The verification consumer's cost: {n:,} × 100 B, unlimited rate, "
                     f"2 producers (medians of {args.reps} interleaved pairs)\n")
        lines.append("| consumer | process wall s | wall spread | ack rate msg/s | "
                     "ack rate spread | last ack s | last read s | last read − last ack s | "
                     "read rate msg/s | e2e p50 ms | CPU s |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        builds = sorted({r.get("build", "current") for r in ver}, reverse=True)
        for b, v in [(b, v) for b in builds for v in ["without", "with"]]:
            rs = [r for r in ver if r["consumer"] == v and r.get("build", "current") == b]
            if not rs:
                continue
            col = lambda k: [r.get(k) for r in rs]
            name = f"{v} `consumer {{ }}`" + (f" ({b})" if len(builds) > 1 else "")
            lines.append(
                f"| {name} | {med(col('wall')):.2f} | {span(col('wall'), '.2f')} | "
                f"{med(col('msg_s')):,.0f} | {span(col('msg_s'), ',.0f')} | "
                f"{fmt(med(col('last_ack')), '.2f')} | {fmt(med(col('last_read')), '.2f')} | "
                f"{fmt(med(col('read_after_ack')), '.2f')} "
                f"({span(col('read_after_ack'), '.2f')}) | "
                f"{fmt(med(col('read_rate')), ',.0f')} | "
                f"{fmt(med(col('e2e_p50_ms')), ',.0f')} | {med(col('cpu')):.2f} |")
        for build in builds:
            pairs = [(a, b) for a in ver for b in ver
                     if a["rep"] == b["rep"] and a["consumer"] == "with"
                     and b["consumer"] == "without"
                     and a.get("build", "current") == b.get("build", "current") == build]
            if not pairs:
                continue
            added = [a["wall"] - b["wall"] for a, b in pairs]
            cpu = [(a["cpu"] - b["cpu"]) / (n / 1e6) for a, b in pairs]
            who = f" ({build})" if len(builds) > 1 else ""
            lines.append(f"\nAttaching the consumer{who} adds {med(added):.2f} s to the process's "
                         f"wall time and {med(cpu):.2f} CPU s per million records (medians of "
                         f"the pairs' differences; spreads {span(added, '.2f')} s and "
                         f"{span(cpu, '.2f')} s/M).")
    return lines
