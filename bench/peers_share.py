"""The share-group section of bench/peers.sh (KIP-932): one pre-filled topic per repetition,
read by kafkabench's share group and by Kafka's kafka-share-consumer-perf-test
(ShareConsumerPerformance), with one and with four members each, and by kafkabench's classic
and KIP-848 group consumers beside them. peers.py runs it through its Bench (its process
runner, topic names and output directory); this module imports nothing of it.

Method and results: bench/README.md, "Share groups (KIP-932)".
"""

import datetime
import json
import os
import re
import subprocess

from peers_read import fmt, med, props_block, span

# The readers, in a repetition's order before it rotates; their labels and members (threads).
READERS = ["kafkabench", "perf-test", "kafkabench-4", "perf-test-4", "classic", "kip848"]
LABELS = {
    "kafkabench": "kafkabench share group, 1 member",
    "perf-test": "kafka-share-consumer-perf-test, 1 thread",
    "kafkabench-4": "kafkabench share group, 4 members",
    "perf-test-4": "kafka-share-consumer-perf-test, 4 threads",
    "classic": "kafkabench classic group, 1 consumer",
    "kip848": "kafkabench KIP-848 group, 1 consumer",
}
MEMBERS = {"kafkabench": 1, "perf-test": 1, "kafkabench-4": 4, "perf-test-4": 4,
           "classic": 1, "kip848": 1}

# The librdkafka settings the consume section gives kafkabench's group consumer (those
# rdkafka_performance sets for itself) less session.timeout.ms, which the KIP-848 protocol
# leaves to the broker: the classic and the KIP-848 reader get the same.
GROUP_CONSUMER = {"queued.min.messages": "1000000", "auto.offset.reset": "earliest"}

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
SHARE_PERF = "org.apache.kafka.tools.ShareConsumerPerformance"
GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

# ShareConsumerPerformance (Kafka 4.4): the header is `start.time, end.time,
# data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms`; its result
# line has those seven fields. start.time is taken before the members subscribe, so its
# nMsg.sec counts the group join and the wait for the first records.
STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3})"
SHARE_PERF_LINE = re.compile(
    rf"^{STAMP}, {STAMP}, ([\d.]+), ([\d.]+), ([\d.]+), (\d+), (\d+)\s*$", re.M)
# A progress line (--show-detailed-stats), one per thread and reporting interval: the same
# fields, cumulative records, then ` for share consumer K`. Threads print without a lock, so a
# line may run into the next one's date: K is followed by a date, a line end or the end.
SHARE_PERF_PROGRESS = re.compile(
    rf"{STAMP}, {STAMP}, [\d.]+, [\d.]+, [\d.]+, (\d+), \d+ for share consumer "
    rf"(\d+?)(?=\d{{4}}-\d\d-\d\d |\s|$)")
# The reporting interval asked of it: a thread prints its first progress line on its first
# record at least this long after it started, so that line's end.time is the moment its first
# records were returned (checked: it then counts 1 record, the first).
PROGRESS_MS = 100


def stamp_secs(text):
    """ShareConsumerPerformance's default date format, yyyy-MM-dd HH:mm:ss:SSS (local time)."""
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S:%f").timestamp()


class ShareSide:
    """The section, run by `b` (peers.Bench)."""

    def __init__(self, b, payload):
        self.b = b
        self.payload = payload
        self.args = b.args
        self.share_groups = []
        self.consumer_groups = []

    def kbs(self, label, body):
        path = os.path.join(self.b.out, f"{label}.kbs")
        with open(path, "w") as f:
            f.write(f'scenario "{label}" {{\n'
                    f'  cluster {{ bootstrap = "{self.b.bootstrap}" }}\n{body}}}\n')
        return path

    def group(self, who, share):
        k = len(self.share_groups) + len(self.consumer_groups) + 1
        name = f"peers-{who}-{os.getpid()}-{k}"
        (self.share_groups if share else self.consumer_groups).append(name)
        return name

    def tools(self, calls):
        """Kafka tool invocations that are not measured (topic and group administration), all
        at once: each is a JVM start of several seconds on this machine. Returns (exit code,
        output) of each, in order."""
        procs = [subprocess.Popen([self.b.kafka_local, "tool", *c], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for c in calls]
        out = []
        for p in procs:
            text, _ = p.communicate()
            out.append((p.returncode, text))
        return out

    # --- the readers -------------------------------------------------------------------------

    def kafkabench(self, label, path, share):
        js = os.path.join(self.b.out, f"{label}.json")
        code, out, cpu, rss, wall = self.b.run(
            [self.b.kafkabench_bin, "run", path, "--quiet", "--json", js])
        if code != 0:
            self.b.log(out[-3000:])
            raise SystemExit(f"kafkabench failed (exit {code}) on {label}")
        with open(js) as f:
            r = json.load(f)["runs"][0]
        c = r.get("consume") or {}
        g = r.get("generator") or {}
        records, drain = c.get("records", 0), c.get("drain_secs")
        busy = g.get("reader_busy")
        return r, {
            "msgs": records, "msg_s": c.get("throughput_msgs", 0.0),
            "own_msg_s": records / drain if records and drain else None,
            "window": "drain.time", "drain_secs": drain, "reader_busy": busy,
            # The busiest reading thread's CPU over the clock's start → the last record
            # settled: busy is its CPU over its own wall time, which ends a little later
            # (after it left the group), so this is its CPU to within that close.
            # A group consumer's reading thread is not its whole reading (librdkafka's broker
            # threads fetch and decode): none there.
            "thread_cpu": busy * drain if share and busy is not None and drain else None,
            "cpu": cpu, "rss": rss, "wall": wall}

    def read_kafkabench(self, label, topic, n, members):
        group = self.group("ks", share=True)
        path = self.kbs(label, (
            f'  topic "{topic}" {{ existing = true }}\n'
            f'  share {{\n    group.id = "{group}"\n  }}\n'
            f"  workload {{\n    messages = 0\n    backlog = existing\n    consumers = {members}\n"
            "  }\n"))
        r, row = self.kafkabench(label, path, True)
        s = r.get("share") or {}
        row.update(accepted=s.get("accepted"), redelivered=s.get("redelivered"),
                   share_ack_p50_ms=(s.get("ack") or {}).get("p50_ms"))
        if s.get("accepted") != n:
            raise SystemExit(f"{label}: the share group accepted {s.get('accepted')} of {n:,}")
        return row

    def read_group(self, label, topic, n, protocol):
        group = self.group("kc" if protocol == "classic" else "kn", share=False)
        props = dict(GROUP_CONSUMER, **{"group.id": f'"{group}"'})
        if protocol != "classic":
            props["group.protocol"] = "consumer"
        path = self.kbs(label, (
            f'  topic "{topic}" {{ existing = true }}\n'
            f"  consumer {{\n{props_block(props)}\n  }}\n"
            "  workload {\n    messages = 0\n    backlog = existing\n    consumers = 1\n  }\n"))
        _, row = self.kafkabench(label, path, False)
        return row

    def read_perf_test(self, label, topic, n, threads, group):
        """ShareConsumerPerformance on a group whose share.auto.offset.reset was set to
        earliest beforehand (Kafka's default, latest, would read nothing of the topic)."""
        code, out, cpu, rss, wall = self.b.run([
            self.b.kafka_local, "tool", SHARE_PERF,
            "--bootstrap-server", self.b.bootstrap, "--topic", topic,
            "--num-records", str(n), "--threads", str(threads), "--group", group,
            # Not only the longest wait between records: the tool also cancels its threads
            # when the whole consumption has taken --timeout + 100 ms (its default 10 s
            # interrupted the first 1 M drains here).
            "--timeout", str(self.args.timeout * 1000),
            "--show-detailed-stats", "--reporting-interval", str(PROGRESS_MS)])
        with open(os.path.join(self.b.out, f"{label}.log"), "w") as f:
            f.write(out)
        m = SHARE_PERF_LINE.search(out)
        if code != 0 or not m or "WARNING: Exiting before" in out:
            self.b.log(out[-3000:])
            raise SystemExit(f"ShareConsumerPerformance failed (exit {code}) on {label}")
        start, end = stamp_secs(m.group(1)), stamp_secs(m.group(2))
        msgs = int(m.group(6))
        firsts = {}
        for p in SHARE_PERF_PROGRESS.finditer(out):
            firsts.setdefault(p.group(4), (stamp_secs(p.group(2)), int(p.group(3))))
        # Each thread's first progress line ends at its first records (it waited for the
        # join far longer than PROGRESS_MS): the earliest is the group's first record. (A
        # thread that acquired nothing, as may happen with a small topic, prints none.)
        first = min(t for t, _ in firsts.values()) if firsts else None
        ok = (first is not None and len(firsts) <= threads
              and all(k == 1 for _, k in firsts.values()) and end > first)
        return {
            "msgs": msgs, "msg_s": msgs / (end - first) if ok else None,
            "own_msg_s": float(m.group(5)), "window": "subscribe → last",
            "drain_secs": (end - first) if ok else None,
            "join_secs": (first - start) if ok else None,
            "cpu": cpu, "rss": rss, "wall": wall}

    # --- a repetition ------------------------------------------------------------------------

    def write(self, label, name, n):
        """The topic, created and written by a kafkabench producer run that keeps it
        (`--keep-topics`): the Java producer's defaults (acks=all, idempotence, batch.size
        16384, linger.ms=5, no compression), so batches of ~16 KB, which a broker acquires
        for a share group whole. Without a consumer kafkabench stamps no header: the records
        are 100 B values, no key, no header. Not measured."""
        props = {"acks": "all", "enable.idempotence": "true", "batch.size": "16384",
                 "linger.ms": "5", "compression.type": "none"}
        path = self.kbs(label, (
            f'  topic "{name}" {{ partitions = {self.args.partitions} }}\n'
            f"  producer {{\n{props_block(props)}\n  }}\n"
            f"  workload {{\n    messages = {n}\n    rate = unlimited\n"
            f"    payload = {self.payload}\n  }}\n"))
        js = os.path.join(self.b.out, f"{label}.json")
        p = subprocess.run([self.b.kafkabench_bin, "run", path, "--quiet", "--json", js,
                            "--keep-topics", "--run-id", "w"],
                           capture_output=True, text=True, timeout=self.args.timeout)
        if p.returncode != 0:
            self.b.log((p.stdout + p.stderr)[-3000:])
            raise SystemExit(f"kafkabench could not write {n:,} records ({label})")
        with open(js) as f:
            r = json.load(f)["runs"][0]
        if r["acked"] != n:
            raise SystemExit(f"{label}: {r['acked']:,} of {n:,} records acknowledged")
        i = r.get("internals") or {}
        return {"msg_s": r["throughput_msgs"],
                "batch_bytes": i.get("batch_bytes_avg"),
                "batch_records": i.get("batch_records_avg")}

    def share(self):
        n = self.args.share_records or self.args.backlog
        chosen = [t for t in READERS if t in self.args.share_readers]
        previous = None
        try:
            for rep in range(self.args.reps):
                groups = {t: self.group("ps", share=True) for t in chosen
                          if t.startswith("perf-test")}
                # Administration at once: the last repetition's topic deleted, the perf-test
                # groups told to start at the earliest offset (Kafka's default, latest, would
                # read nothing of the topic).
                calls = [[CONFIG_COMMAND, "--bootstrap-server", self.b.bootstrap, "--alter",
                          "--entity-type", "groups", "--entity-name", g,
                          "--add-config", "share.auto.offset.reset=earliest"]
                         for g in groups.values()]
                if previous:
                    calls.append(self.delete_topic_call(previous))
                    previous = None
                for (code, out), c in zip(self.tools(calls), calls):
                    if code != 0 and c[0] == CONFIG_COMMAND:
                        self.b.log(out[-3000:])
                        raise SystemExit(f"ConfigCommand failed (exit {code}) on {c[-3]}")
                # kafkabench suffixes the run id to a topic it creates (the name is unique).
                name = self.b.topic("share")
                topic = previous = f"{name}-w"
                w = self.write(f"share-{rep}-write", name, n)
                w.update(section="share", tool="write", rep=rep, records=n)
                self.b.rows.append(w)
                self.b.log(f"share-{rep}-write: {n:,} records at {w['msg_s']:,.0f}/s, batches "
                           f"of {fmt(w['batch_records'], ',.0f')} records "
                           f"({fmt(w['batch_bytes'], ',.0f')} B) on average")
                k = rep % len(chosen)
                for t in chosen[k:] + chosen[:k]:
                    label = f"share-{rep}-{t}"
                    if t.startswith("kafkabench"):
                        r = self.read_kafkabench(label, topic, n, MEMBERS[t])
                    elif t.startswith("perf-test"):
                        r = self.read_perf_test(label, topic, n, MEMBERS[t], groups[t])
                    else:
                        r = self.read_group(label, topic, n, t)
                    if r["msgs"] < n:
                        raise SystemExit(f"{label} read {r['msgs']:,} of {n:,} records")
                    r.update(section="share", tool=t, rep=rep, records=n, members=MEMBERS[t])
                    self.b.rows.append(r)
                    self.b.log(f"{label}: {fmt(r['msg_s'], ',.0f')} records/s first → last, "
                               f"{fmt(r['own_msg_s'], ',.0f')} over {r['window']}, "
                               f"{r['cpu'] / (r['msgs'] / 1e6):.2f} CPU s/M, "
                               f"{r['rss']:.0f} MiB, {r['wall']:.1f} s")
                    self.b.save()
        finally:
            calls = [self.delete_topic_call(previous)] if previous else []
            # Kafka 4.4's ConsumerGroupCommand deletes share groups too (DeleteGroups).
            groups = self.share_groups + self.consumer_groups
            if groups:
                calls.append([GROUP_COMMAND, "--bootstrap-server", self.b.bootstrap, "--delete",
                              *[x for g in groups for x in ("--group", g)]])
            self.tools(calls)
            self.share_groups, self.consumer_groups = [], []

    def delete_topic_call(self, topic):
        return [TOPIC_COMMAND, "--bootstrap-server", self.b.bootstrap, "--delete", "--topic", topic]


# --- the report ------------------------------------------------------------------------------

def report(rows, args):
    lines = []
    sh = [r for r in rows if r["section"] == "share"]
    reads = [r for r in sh if r["tool"] != "write"]
    if not reads:
        return lines
    n = reads[0]["records"]
    reps = len({r["rep"] for r in reads})
    lines.append(f"\n### Share groups (KIP-932): draining {n:,} records of 100 B from one "
                 f"topic of {args.partitions} partitions (medians of {reps} interleaved "
                 "repetitions; spread = min–max)\n")
    lines.append("| reader | records/s first → last (median) | spread | records/s, own window | "
                 "CPU s per M records (process) | CPU spread | reading thread CPU s per M | "
                 "peak RSS MiB | process wall s |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    by = {}
    for t in READERS:
        rs = [r for r in reads if r["tool"] == t]
        if not rs:
            continue
        rate = [r["msg_s"] for r in rs]
        cpu = [r["cpu"] / (r["msgs"] / 1e6) for r in rs]
        # One member: its thread; several: the busiest one's × their number (at most that).
        thread = [r["thread_cpu"] * r["members"] / (r["msgs"] / 1e6) for r in rs
                  if r.get("thread_cpu") is not None]
        by[t] = (med(rate), med(cpu), med([r["own_msg_s"] for r in rs]))
        lines.append(
            f"| {LABELS[t]} | {fmt(med(rate), ',.0f')} | {span(rate, ',.0f')} | "
            f"{fmt(med([r['own_msg_s'] for r in rs]), ',.0f')} | {med(cpu):.2f} | "
            f"{span(cpu, '.2f')} | "
            + (("≤ " if rs[0]["members"] > 1 else "") + f"{med(thread):.3f}" if thread else "-")
            + f" | {med([r['rss'] for r in rs]):.0f} | {med([r['wall'] for r in rs]):.2f} |")
    lines.append(
        "\nRecords/s first → last: kafkabench's `consume.throughput` (first record acquired → "
        "last); ShareConsumerPerformance's records over its first progress line's end (its "
        "first records returned) → its end time. Own window: kafkabench's records / "
        "`drain.time` (the clock's start, after the join, → the last record settled); "
        "ShareConsumerPerformance's own nMsg.sec (before its members subscribe → its last "
        "record: the group join included). CPU: user + sys of the whole process (wait4), start-up "
        "and join included, per record read; the reading thread's: kafkabench's "
        "`generator.reader_busy` × `drain.time` (with 4 members, the busiest × 4).")
    writes = [r for r in sh if r["tool"] == "write"]
    if writes:
        lines.append(
            "\nWritten before the readers by a kafkabench producer run that keeps its topic, "
            "with the Java producer's defaults (acks=all, idempotence, batch.size=16384, "
            "linger.ms=5, no compression; no key, no header): "
            f"{med([r['msg_s'] for r in writes]):,.0f} records/s, batches of "
            f"{fmt(med([r['batch_records'] for r in writes]), ',.0f')} records "
            f"({fmt(med([r['batch_bytes'] for r in writes]), ',.0f')} B) on average "
            f"(medians; spread {span([r['batch_records'] for r in writes], ',.0f')} records).")
    verdict = []
    for kb, pt, name in [("kafkabench", "perf-test", "1 member / 1 thread"),
                         ("kafkabench-4", "perf-test-4", "4 members / 4 threads")]:
        if kb in by and pt in by:
            pairs = [(a, p) for a in reads for p in reads if a["tool"] == kb
                     and p["tool"] == pt and a["rep"] == p["rep"] and p["msg_s"]]
            ratio = [a["msg_s"] / p["msg_s"] for a, p in pairs]
            mine, theirs = by[kb], by[pt]
            verdict.append(
                f"| {name} | {fmt(mine[0] / theirs[0] if theirs[0] else None, '.2f')}× "
                f"({span(ratio, '.2f')}) | {mine[2] / theirs[2]:.2f}× | "
                f"{mine[1] / theirs[1]:.3f}× |")
    if verdict:
        lines.append("\nkafkabench's share group relative to kafka-share-consumer-perf-test "
                     "(medians; per-repetition spread in brackets; goal: read rate ≥ 1.0× at "
                     "lower CPU per record):\n")
        lines.append("| members | read rate, first → last | read rate, own windows | "
                     "CPU per record (process) |")
        lines.append("|---|---:|---:|---:|")
        lines.extend(verdict)
    waits = []
    for t in READERS:
        rs = [r for r in reads if r["tool"] == t]
        if t.startswith("kafkabench") and rs:
            w = [r["drain_secs"] - r["msgs"] / r["msg_s"] for r in rs
                 if r["drain_secs"] and r["msg_s"]]
            waits.append(f"{LABELS[t]} {fmt(med(w), '.2f')} s (`drain.time` less the reading "
                         "window: the clock's start → the first record, and the last record → "
                         "the broker's answer to its acknowledgement)")
        elif t.startswith("perf-test") and rs:
            w = [r["join_secs"] for r in rs]
            waits.append(f"{LABELS[t]} {fmt(med(w), '.2f')} s (its start → its first record)")
    if waits:
        lines.append("\nOutside the reading window (medians): " + "; ".join(waits) + ".")
    base = by.get("kafkabench")
    if base and base[0]:
        others = [f"{LABELS[t]}: {by[t][0] / base[0]:.2f}×" for t in ("classic", "kip848")
                  if t in by and by[t][0]]
        if others:
            lines.append("\nThe group consumers' read rates relative to kafkabench's 1-member "
                         "share group (medians): " + "; ".join(others) + ".")
    return lines
