#!/usr/bin/env python3
"""The body of bench/peers.sh (which builds the tools and makes sure a broker runs).

Each measured process is started alone and reaped with wait4(), so its CPU time (user + sys)
and peak RSS are the kernel's figures for that process and its threads: the JVM's JIT and GC
threads count for kafka-producer-perf-test exactly as librdkafka's broker threads count for the
other two. Throughput is what each tool reports for itself.
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

import peers_franz
import peers_java
import peers_read
import peers_share

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KAFKA_LOCAL = os.path.join(REPO, "scripts", "kafka-local")
KAFKABENCH = os.path.join(REPO, "target", "release", "kafkabench")

# The producer settings all three tools get, by the name each one understands. Everything
# else stays at each client's default. acks=1 disables the Java client's idempotence, and
# librdkafka's is off by default; both are said explicitly anyway.
COMMON = {
    "acks": "1",
    "linger.ms": "5",
    "batch.size": "262144",
    "max.in.flight.requests.per.connection": "5",
    "enable.idempotence": "false",
}
TOOLS = ["kafkabench", "perf-test", "rdkafka_perf"]
# The throughput section's name for `--baseline`'s build, run in the same repetitions.
BASELINE = "kafkabench (baseline)"
# The read side's two (consume: a backlog drained by each tool; verifier: the producers with
# and without `consumer { }`) are in peers_read.py; share groups (KIP-932) against
# kafka-share-consumer-perf-test in peers_share.py.
SECTIONS = ["throughput", "rate", "memory", "consume", "verifier", "share", "franz-go", "java"]


def run_wait4(cmd, timeout):
    """Runs cmd; returns (exit code, output, CPU seconds, peak RSS MiB, wall seconds), the CPU
    and RSS from this child's own rusage (wait4)."""
    start = time.monotonic()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.close(w)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(w)
    chunks = []
    deadline = start + timeout
    os.set_blocking(r, False)
    status = None
    usage = None
    while True:
        try:
            data = os.read(r, 65536)
            if data:
                chunks.append(data)
                continue
            if data == b"":
                # EOF: the child closed its end (it exited, or will).
                _, status, usage = os.wait4(pid, 0)
                break
        except BlockingIOError:
            pass
        done_pid, st, ru = os.wait4(pid, os.WNOHANG)
        if done_pid == pid:
            status, usage = st, ru
            # Drain what is left in the pipe.
            os.set_blocking(r, True)
            while True:
                data = os.read(r, 65536)
                if not data:
                    break
                chunks.append(data)
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            chunks.append(b"\n[timed out]")
            break
        time.sleep(0.01)
    os.close(r)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    rss_mib = usage.ru_maxrss / 1024.0  # Linux reports KiB
    return code, b"".join(chunks).decode("utf-8", "replace"), cpu, rss_mib, wall


def tool(cls, *args, quiet=True):
    cmd = [KAFKA_LOCAL, "tool", cls, *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 and not quiet:
        sys.stderr.write(p.stdout + p.stderr)
    return p


def create_topic(bootstrap, name, partitions):
    p = tool(
        "org.apache.kafka.tools.TopicCommand",
        "--bootstrap-server", bootstrap, "--create", "--topic", name,
        "--partitions", str(partitions), "--replication-factor", "1",
        quiet=False,
    )
    if p.returncode != 0:
        raise SystemExit(f"cannot create topic {name}")


def delete_topic(bootstrap, name):
    tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
         "--delete", "--topic", name)


def payload_text(size, seed=20261130):
    """Random uppercase letters: what ProducerPerformance sends (it draws A-Z once per run);
    kafkabench and rdkafka_performance get this exact string, so lz4 sees the same entropy."""
    rng = random.Random(seed + size)
    return "".join(chr(65 + rng.randrange(26)) for _ in range(size))


class Bench:
    def __init__(self, args):
        self.args = args
        self.bootstrap = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.out = args.out or os.path.join(REPO, "bench", "out", stamp)
        os.makedirs(self.out, exist_ok=True)
        self.rows = []
        self.seq = 0
        # The 1-minute load average before each read-side run: how busy the machine was.
        self.loads = []
        self.kafkabench_bin = args.kafkabench
        self.kafka_local = KAFKA_LOCAL
        self.read_side = peers_read.ReadSide(
            self, COMMON, f'constant("{payload_text(100)}")')
        self.share_side = peers_share.ShareSide(self, f'constant("{payload_text(100)}")')
        self.franz_side = peers_franz.FranzSide(self)
        self.java_side = peers_java.JavaSide(self, COMMON, payload_text)

    # The process runner and topic commands, for the read side (bench/peers_read.py).
    def run(self, cmd):
        self.loads.append(os.getloadavg()[0])
        return run_wait4(cmd, self.args.timeout)

    def tool(self, cls, *args):
        return tool(cls, *args)

    def wait_quiet(self):
        """With --quiet-load L: waits (up to --quiet-wait seconds) until the 1-minute load
        average is under L. Returns the load average it starts at."""
        load = os.getloadavg()[0]
        if self.args.quiet_load is None:
            return load
        deadline = time.monotonic() + self.args.quiet_wait
        if load >= self.args.quiet_load:
            self.log(f"waiting for a 1-minute load average under {self.args.quiet_load} "
                     f"(now {load:.2f})")
        while load >= self.args.quiet_load and time.monotonic() < deadline:
            time.sleep(5)
            load = os.getloadavg()[0]
        if load >= self.args.quiet_load:
            self.log(f"still {load:.2f} after {self.args.quiet_wait} s: going on (marked)")
        return load

    def delete_topic(self, name):
        delete_topic(self.bootstrap, name)

    def topic(self, what):
        self.seq += 1
        return f"peers-{what}-{os.getpid()}-{self.seq}"

    def log(self, msg):
        print(msg, file=sys.stderr, flush=True)

    # --- one run per tool -------------------------------------------------------------------

    def kafkabench(self, label, size, codec, n, rate=None, payload=None, binary=None):
        path = os.path.join(self.out, f"{label}.kbs")
        props = dict(COMMON, **{"compression.type": codec})
        props_text = "\n    ".join(f"{k} = {v}" for k, v in props.items())
        rate_line = f"rate = {rate}/s" if rate else "rate = unlimited"
        payload = payload or f'constant("{payload_text(size)}")'
        with open(path, "w") as f:
            f.write(
                f'scenario "peers" {{\n'
                f'  cluster {{ bootstrap = "{self.bootstrap}" }}\n'
                f'  topic "peers-kb" {{ partitions = {self.args.partitions} }}\n'
                f"  producer {{\n    {props_text}\n  }}\n"
                f"  workload {{\n    messages = {n}\n    {rate_line}\n    payload = {payload}\n  }}\n"
                f"}}\n"
            )
        js = os.path.join(self.out, f"{label}.json")
        code, out, cpu, rss, wall = run_wait4(
            [binary or self.kafkabench_bin, "run", path, "--quiet", "--json", js],
            self.args.timeout)
        if code != 0:
            self.log(out)
            raise SystemExit(f"kafkabench failed (exit {code}) on {label}")
        with open(js) as f:
            r = json.load(f)["runs"][0]
        return {
            "msgs": r["sent"], "msg_s": r["throughput_msgs"],
            "mb_s": r["throughput_bytes"] / 1e6, "cpu": cpu, "rss": rss, "wall": wall,
            "achieved": r.get("achieved_rate"), "send_delay": r.get("send_delay"),
            "ack": r.get("ack"),
        }

    def perf_test(self, label, size, codec, n, rate=None):
        t = self.topic("pp")
        create_topic(self.bootstrap, t, self.args.partitions)
        props = dict(COMMON, **{"compression.type": codec})
        cmd = [
            KAFKA_LOCAL, "tool", "org.apache.kafka.tools.ProducerPerformance",
            "--topic", t, "--num-records", str(n), "--record-size", str(size),
            "--throughput", str(rate or -1),
            "--producer-props", f"bootstrap.servers={self.bootstrap}",
            *[f"{k}={v}" for k, v in props.items()],
        ]
        try:
            code, out, cpu, rss, wall = run_wait4(cmd, self.args.timeout)
        finally:
            delete_topic(self.bootstrap, t)
        m = re.search(
            r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
            r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th",
            out)
        if code != 0 or not m:
            self.log(out[-3000:])
            raise SystemExit(f"ProducerPerformance failed (exit {code}) on {label}")
        # Its MB/sec is MiB-based (bytes / 1024 / 1024); report MB like the others.
        msg_s = float(m.group(2))
        return {
            "msgs": int(m.group(1)), "msg_s": msg_s, "mb_s": msg_s * size / 1e6,
            "cpu": cpu, "rss": rss, "wall": wall, "achieved": msg_s,
            "ack": {"p50_ms": float(m.group(6)), "p99_ms": float(m.group(8)),
                    "max_ms": float(m.group(5))},
        }

    def rdkafka_perf(self, label, size, codec, n):
        t = self.topic("rk")
        create_topic(self.bootstrap, t, self.args.partitions)
        cmd = [
            self.args.rdkafka_performance, "-P", "-t", t, "-b", self.bootstrap,
            "-s", str(size), "-c", str(n), "-a", COMMON["acks"], "-q",
            "-m", payload_text(size),
            "-z", codec,
            *[x for k, v in COMMON.items() if k != "acks"
              for x in ("-X", f"{'max.in.flight' if k.startswith('max.in.flight') else k}={v}")],
        ]
        try:
            code, out, cpu, rss, wall = run_wait4(cmd, self.args.timeout)
        finally:
            delete_topic(self.bootstrap, t)
        m = re.search(r"(\d+) messages produced .*?, (\d+) delivered .*? (\d+) msgs/s and ([\d.]+) MB/s", out)
        if code != 0 or not m:
            self.log(out[-3000:])
            raise SystemExit(f"rdkafka_performance failed (exit {code}) on {label}")
        return {"msgs": int(m.group(2)), "msg_s": float(m.group(3)), "mb_s": float(m.group(4)),
                "cpu": cpu, "rss": rss, "wall": wall}

    # --- sections ---------------------------------------------------------------------------

    def throughput(self):
        configs = [(int(c.split(":")[0]), c.split(":")[1]) for c in self.args.config]
        for rep in range(self.args.reps):
            for size, codec in configs:
                n = self.args.small if size < 1000 else self.args.large
                # Rotate the order each repetition: no tool always runs first (or last).
                tools = TOOLS + ([BASELINE] if self.args.baseline else [])
                k = rep % len(tools)
                order = tools[k:] + tools[:k]
                for t in order:
                    label = f"tp-{size}-{codec}-{t.replace(' (baseline)', '-baseline')}-{rep}"
                    if t == "kafkabench":
                        r = self.kafkabench(label, size, codec, n)
                    elif t == BASELINE:
                        r = self.kafkabench(label, size, codec, n, binary=self.args.baseline)
                    elif t == "perf-test":
                        r = self.perf_test(label, size, codec, n)
                    else:
                        r = self.rdkafka_perf(label, size, codec, n)
                    r.update(section="throughput", tool=t, size=size, codec=codec, rep=rep)
                    self.rows.append(r)
                    self.log(f"{label}: {r['msg_s']:.0f} msg/s, {r['mb_s']:.1f} MB/s, "
                             f"{r['cpu'] / (r['msgs'] / 1e6):.2f} CPU s/M, {r['rss']:.0f} MiB")
                    self.save()

    def rate(self):
        for rate in self.args.rates:
            n = rate * self.args.rate_secs
            for t in ["kafkabench", "perf-test"]:
                label = f"rate-{rate}-{t}"
                if t == "kafkabench":
                    r = self.kafkabench(label, 100, "none", n, rate=rate)
                else:
                    r = self.perf_test(label, 100, "none", n, rate=rate)
                r.update(section="rate", tool=t, rate=rate)
                self.rows.append(r)
                self.log(f"{label}: achieved {r['achieved']:.1f}/s")
                self.save()

    def memory(self):
        for n in [self.args.mem_small, self.args.mem_large]:
            label = f"mem-{n}"
            r = self.kafkabench(label, 100, "none", n)
            r.update(section="memory", tool="kafkabench", n=n)
            self.rows.append(r)
            self.log(f"{label}: peak RSS {r['rss']:.1f} MiB")
            self.save()

    def consume(self):
        self.read_side.consume()

    def verifier(self):
        self.read_side.verifier()

    def share(self):
        self.share_side.share()

    def franz_go(self):
        self.franz_side.run()

    def java(self):
        self.java_side.run()

    def interleaved(self, section, prefix, configs, tools, run_one):
        """--reps repetitions of every (size, codec) in `configs` on every tool, the tools'
        order rotated per repetition (A B C, B C A, …) so that none always runs first on a
        cold broker; `run_one(tool, label, size, codec)` runs one and returns its row. Each
        row gets the section, tool, configuration, repetition and the 1-minute load average
        before it, and is saved at once."""
        for rep in range(self.args.reps):
            for size, codec in configs:
                k = rep % len(tools)
                for t in tools[k:] + tools[:k]:
                    label = f"{prefix}-{size}-{codec}-{tools.index(t)}-{rep}"
                    load = os.getloadavg()[0]
                    r = run_one(t, label, size, codec)
                    r.update(section=section, tool=t, size=size, codec=codec, rep=rep, load=load)
                    self.rows.append(r)
                    self.log(f"{label} {t}: {r['msg_s']:,.0f} msg/s, "
                             f"{r['cpu'] / (r['msgs'] / 1e6):.3f} CPU s/M, load {load:.1f}")
                    self.save()

    def save(self):
        with open(os.path.join(self.out, "runs.json"), "w") as f:
            json.dump(self.rows, f, indent=1)


# --- the report ------------------------------------------------------------------------------

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    return f"{min(xs):,.0f}–{max(xs):,.0f}" if xs else "-"


def report(rows, args):
    lines = []
    tp = [r for r in rows if r["section"] == "throughput"]
    if tp:
        lines.append("### Throughput, unlimited rate "
                     f"(medians of {args.reps} interleaved runs; spread = min–max)\n")
        lines.append("| record | codec | tool | msg/s (median) | msg/s spread | MB/s | CPU s per M msgs | peak RSS MiB |")
        lines.append("|---|---|---|---:|---:|---:|---:|---:|")
        verdict = []
        before_after = []
        for size, codec in sorted({(r["size"], r["codec"]) for r in tp}):
            med_by = {}
            for t in TOOLS + [BASELINE]:
                rs = [r for r in tp if r["size"] == size and r["codec"] == codec and r["tool"] == t]
                if not rs:
                    continue
                ms = [r["msg_s"] for r in rs]
                cpu = [r["cpu"] / (r["msgs"] / 1e6) for r in rs]
                med_by[t] = (med(ms), med(cpu))
                lines.append(f"| {size} B | {codec} | {t} | {med(ms):,.0f} | {spread(ms)} | "
                             f"{med([r['mb_s'] for r in rs]):.1f} | {med(cpu):.2f} | "
                             f"{med([r['rss'] for r in rs]):.0f} |")
            kb = med_by.get("kafkabench")
            if kb:
                pp, rk = med_by.get("perf-test"), med_by.get("rdkafka_perf")
                verdict.append(
                    f"| {size} B | {codec} | "
                    + (f"{kb[0] / pp[0]:.2f}× | " if pp else "- | ")
                    + (f"{kb[0] / rk[0]:.2f}× | {kb[1] / rk[1]:.2f}× |" if rk else "- | - |"))
            base = med_by.get(BASELINE)
            if kb and base:
                before_after.append(f"| {size} B | {codec} | {kb[0] / base[0]:.3f}× | "
                                    f"{kb[1] / base[1]:.3f}× |")
        lines.append("\nkafkabench relative to its peers (medians; goal: ≥ 1.00× perf-test and "
                     "≥ 0.95× rdkafka_performance in throughput, ≤ 1.15× rdkafka_performance in CPU):\n")
        lines.append("| record | codec | throughput vs perf-test | throughput vs rdkafka_perf | CPU per msg vs rdkafka_perf |")
        lines.append("|---|---|---:|---:|---:|")
        lines.extend(verdict)
        if before_after:
            lines.append("\nkafkabench against `--baseline`'s build, same repetitions (medians; "
                         "goal: within 3 %):\n")
            lines.append("| record | codec | throughput, current / baseline | "
                         "CPU per msg, current / baseline |")
            lines.append("|---|---|---:|---:|")
            lines.extend(before_after)
    rt = [r for r in rows if r["section"] == "rate"]
    if rt:
        lines.append(f"\n### Fixed rate, 100 B, {args.rate_secs} s per rate\n")
        lines.append("| target/s | tool | achieved/s | error | send delay p50 | send delay p99 | send delay max | ack p50 | ack p99 |")
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rt:
            sd = r.get("send_delay") or {}
            ack = r.get("ack") or {}
            fmt = lambda v: "-" if v is None else (f"{v * 1000:.0f} µs" if v < 1 else f"{v:.2f} ms")
            err = (r["achieved"] - r["rate"]) / r["rate"] * 100
            lines.append(
                f"| {r['rate']:,} | {r['tool']} | {r['achieved']:,.1f} | {err:+.2f}% | "
                f"{fmt(sd.get('p50_ms'))} | {fmt(sd.get('p99_ms'))} | {fmt(sd.get('max_ms'))} | "
                f"{fmt(ack.get('p50_ms'))} | {fmt(ack.get('p99_ms'))} |")
        lines.append("\nperf-test reports no send delay (it has no intended send times); its "
                     "latency percentiles are whole milliseconds, measured from its send() call.")
    mem = [r for r in rows if r["section"] == "memory"]
    if mem:
        lines.append("\n### Memory against message count (kafkabench, 100 B, unlimited)\n")
        lines.append("| messages | peak RSS MiB | msg/s |")
        lines.append("|---:|---:|---:|")
        for r in mem:
            lines.append(f"| {r['n']:,} | {r['rss']:.1f} | {r['msg_s']:,.0f} |")
    lines.extend(peers_read.report(rows, args))
    lines.extend(peers_share.report(rows, args))
    lines.extend(peers_franz.report(rows, args))
    lines.extend(peers_java.report(rows, args))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(
        prog="bench/peers.sh",
        description="kafkabench vs kafka-producer-perf-test / kafka-consumer-perf-test / "
                    "kafka-share-consumer-perf-test vs rdkafka_performance, same broker, interleaved. Writes bench/out/<time>/{results.md,runs.json,*.kbs}.")
    ap.add_argument("--reps", type=int, default=5, help="repetitions per configuration (default 5)")
    ap.add_argument("--only", choices=SECTIONS, action="append",
                    help="run only these sections (repeatable; default all)")
    ap.add_argument("--config", action="append",
                    help="SIZE:CODEC to run in the throughput section (repeatable; default "
                         "100:none 100:lz4 1024:none 1024:lz4)")
    ap.add_argument("--partitions", type=int, default=3, help="partitions per topic (default 3)")
    ap.add_argument("--small", type=int, default=2_000_000, help="records per 100 B run")
    ap.add_argument("--large", type=int, default=500_000, help="records per 1 KiB run")
    ap.add_argument("--rates", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--rate-secs", type=int, default=10, help="seconds per fixed-rate run")
    ap.add_argument("--mem-small", type=int, default=1_000_000)
    ap.add_argument("--mem-large", type=int, default=10_000_000)
    ap.add_argument("--backlog", type=int, default=1_000_000,
                    help="records of 100 B in the consume section's backlog (default 1000000)")
    ap.add_argument("--readers", nargs="+", choices=peers_read.READERS,
                    default=peers_read.READERS,
                    help="the tools that drain the backlog (default all three)")
    ap.add_argument("--verify-messages", type=int, default=1_000_000,
                    help="records per run of the verifier section (default 1000000)")
    ap.add_argument("--share-records", type=int,
                    help="records of 100 B in the share section's topic (default: --backlog's)")
    ap.add_argument("--share-readers", nargs="+", choices=peers_share.READERS,
                    default=peers_share.READERS,
                    help="the share section's readers (default all: kafkabench and perf-test with "
                         "1 and 4 members, kafkabench's classic and kip848 group consumers)")
    ap.add_argument("--quiet-load", type=float, metavar="L",
                    help="before each repetition of the consume section, wait until the "
                         "1-minute load average is under L (the quiet series: 1.0)")
    ap.add_argument("--quiet-wait", type=int, default=900, metavar="SECS",
                    help="the longest wait for --quiet-load per repetition (default 900)")
    ap.add_argument("--franz-config", action="append",
                    help="SIZE:CODEC for the franz-go section (repeatable; default 100:none "
                         "1024:lz4)")
    ap.add_argument("--franz-secs", type=int, default=15,
                    help="seconds per run of the franz-go section (default 15)")
    ap.add_argument("--franz-linger-ms", type=int, default=10,
                    help="linger.ms both franz-go producers get (default 10, franz-go's own)")
    ap.add_argument("--java-config", action="append",
                    help="SIZE:CODEC for the java section (repeatable; default 100:none 1024:lz4)")
    ap.add_argument("--java-lines", type=int, default=10000,
                    help="lines of the java section's payload file (default 10000)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds before a run is killed")
    ap.add_argument("--kafkabench", default=KAFKABENCH, metavar="BIN",
                    help="the kafkabench binary to measure (default target/release/kafkabench; "
                         "another build, for a before/after comparison)")
    ap.add_argument("--baseline", metavar="BIN",
                    help="the throughput, verifier and consume sections also run this "
                         "kafkabench binary, interleaved with the measured one (before/after on "
                         "the same machine state)")
    ap.add_argument("--out", help="output directory (default bench/out/<time>)")
    ap.add_argument("--rdkafka-performance", required=True, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.config = args.config or ["100:none", "100:lz4", "1024:none", "1024:lz4"]
    args.franz_config = args.franz_config or ["100:none", "1024:lz4"]
    args.java_config = args.java_config or ["100:none", "1024:lz4"]
    sections = args.only or SECTIONS
    b = Bench(args)
    b.log(f"writing to {b.out}")
    for s in sections:
        getattr(b, s.replace("-", "_"))()
    text = report(b.rows, args)
    if b.loads:
        text += (f"\nLoad average (1 min) before the read side's runs: {min(b.loads):.1f}–"
                 f"{max(b.loads):.1f}, median {statistics.median(b.loads):.1f} "
                 f"({os.cpu_count()} CPUs).\n")
    with open(os.path.join(b.out, "results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
