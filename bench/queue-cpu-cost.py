#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""queue-cpu-cost.py: the CPU that gpursa's queue path costs per RSA operation,
without a GPU and without the exponentiation.

Runs `openssl speed -provider gpursa -provider default -async_jobs N rsaBITS`
in ONE process with ONE application thread, on the BENCHMARK-ONLY instant
backend (bench/gpursa_bench_instant.c: a batch completes at once, results from
a cache keyed by the whole input, checked once), and reads every thread's CPU
time (/proc/PID/task/TID/schedstat, ns) when the signing phase starts and when
it ends. What is left per operation is everything but the exponentiation:
EVP, the provider's padding, the queue (enqueue, dispatcher, runner, blinding,
completion, eventfd wake) and the ASYNC pause/resume, plus openssl speed's own
loop (select() over the wait contexts' fds).

The instant backend lives only in bench/instant/gpursa.so, the provider module
that every build makes beside the real one (never installed). From the build tree:
    make && python3 /path/to/bench/queue-cpu-cost.py --jobs 64,256

The queue's settings come from the environment as usual (GPURSA_MAX_WAIT_US,
GPURSA_MAX_BATCH, ...): with the default max_wait_us a run with N jobs is
bounded by N / max_wait, since all of openssl speed's jobs wait in one batch.

Threads are told apart by name: the application's thread (the process's main
thread), gpursa-disp (dispatcher), gpursa-run (runners), gpursa-cpu (CPU
workers); anything else is "other" (OpenSSL or the backend).

Options:
  --openssl PATH     openssl binary (default: openssl)
  --modules DIR      OPENSSL_MODULES: the directory of gpursa.so (default: bench/instant/.libs,
                     with --real-host provider/.libs)
  --jobs N[,N...]    async jobs (default 64,256)
  --bits B           RSA size (default 2048)
  --seconds S        signing time per run (default 5)
  --repeat R         runs per N; the one with the least total CPU/op is reported, the
                     least disturbed on a shared machine (default 1)
  --latency-us U     modelled device latency (GPURSA_BENCH_INSTANT_US, no CPU spent)
  --real-host        the real host backend instead (exponentiations on the CPU)
  --perf FILE        record the signing phase with perf (perf record -g), to FILE.N
  --csv FILE         append one row per reported run

Several processes (--procs P): the shape of a server whose workers each have
their own queue (async nginx): P `gpursa-latency` processes (--latency-tool,
default bench/gpursa-latency of the build tree), each one thread with --jobs
ASYNC jobs, open loop at --rate operations/s each (fixed gaps), signing with
one key (--key, else one made for the run) and GPURSA_MIN_GPU_BATCH=1 as
conf/nginx-async.conf's command line presets. The CPU of every thread of
every process is read after the warm-up and --seconds later; per operation
and per batch = that CPU over the operations and batches of the window (each
process's achieved rate, and its mean batch). --shared makes the instant
device report itself shared (GPURSA_BENCH_INSTANT_SHARED=1: the queue's
policy under NVIDIA MPS). Every 64th signature is verified by the tool.
  --procs P          processes (default: one openssl speed)
  --rate R           operations/s offered by each process
  --latency-tool P   the gpursa-latency binary
  --key PEM          the RSA key (default: generated)
  --shared           the instant device reports itself shared (MPS)
  --warmup S         seconds before the window (default 3)
"""
import argparse
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

GROUPS = ("app", "gpursa-disp", "gpursa-run", "gpursa-cpu", "other")


def thread_times(pid):
    """{tid: (name, cpu_ns, runs)} for every thread of pid; runs: the times it was
    scheduled in (schedstat's third field, 0 without it): each wake-up or
    preemption, each a context switch."""
    out = {}
    tck = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(base + "/comm") as f:
                name = f.read().strip()
            try:
                with open(base + "/schedstat") as f:
                    v = f.read().split()
                ns, runs = int(v[0]), int(v[2])
            except (OSError, ValueError, IndexError):
                with open(base + "/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ns = (int(fields[11]) + int(fields[12])) * 1_000_000_000 // tck
                runs = 0
        except OSError:
            continue
        out[int(tid)] = (name, ns, runs)
    return out


def group_of(pid, tid, name, app_name=None):
    if tid == pid or name == app_name:
        return "app"
    for g in GROUPS[1:4]:
        if name.startswith(g):
            return g
    return "other"


def one_run(args, jobs, run_no):
    env = dict(os.environ)
    env["OPENSSL_MODULES"] = args.modules
    env["GPURSA_BACKEND"] = "host"
    env["GPURSA_STATS"] = "1"
    env.pop("OPENSSL_CONF", None)
    if not args.real_host and args.latency_us:
        env["GPURSA_BENCH_INSTANT_US"] = str(args.latency_us)
    cmd = [args.openssl, "speed", "-elapsed", "-seconds", str(args.seconds), "-provider", "gpursa",
           "-provider", "default", "-propquery", "?provider=gpursa",
           "-async_jobs", str(jobs), f"rsa{args.bits}"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    buf = b""
    t_a = t_b = None
    s_a = s_b = None
    perf = None
    fds = [p.stdout.fileno(), p.stderr.fileno()]
    err = b""
    while fds:
        ready, _, _ = select.select(fds, [], [], 1.0)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                fds.remove(fd)
                continue
            if fd == p.stderr.fileno():
                err += chunk
            buf += chunk
            if s_a is None and re.search(rb"private rsa's for", buf):
                s_a, t_a = thread_times(p.pid), time.monotonic()
                if args.perf:
                    perf = subprocess.Popen(["perf", "record", "-q", "-g", "-e", "cpu-clock",
                                             "-F", "2000", "-p", str(p.pid), "-o",
                                             f"{args.perf}.{jobs}.{run_no}"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if s_a is not None and s_b is None and re.search(rb"private RSA's in", buf):
                s_b, t_b = thread_times(p.pid), time.monotonic()
                if perf is not None:
                    perf.send_signal(signal.SIGINT)
                    perf.wait()
    p.wait()
    text = buf.decode(errors="replace")
    m = re.search(r"(\d+) \d+ bits private RSA's in ([\d.]+)s", text)
    if p.returncode != 0 or m is None or s_a is None or s_b is None:
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit(f"openssl speed failed (rc {p.returncode}): {' '.join(cmd)}")
    if (b"BENCHMARK-ONLY instant backend" in err) == args.real_host:
        raise SystemExit(f"{args.modules}/gpursa.so is not the "
                         f"{'real' if args.real_host else 'instant (bench/instant/)'} module")
    ops = int(m.group(1))
    secs = float(m.group(2))
    per = {g: 0 for g in GROUPS}
    for tid, (name, ns, _) in s_b.items():
        ns0 = s_a.get(tid, (name, 0))[1]
        per[group_of(p.pid, tid, name)] += ns - ns0
    stats = re.search(r"gpursa: ops .*", text)
    batch = re.search(r"mean_batch=([\d.]+)", text)
    inline = re.search(r"inline=(\d+)", text)
    return {
        "jobs": jobs, "ops": ops, "secs": secs, "rate": ops / secs, "wall": t_b - t_a,
        "us": {g: per[g] / 1000.0 / ops for g in GROUPS},
        "total_us": sum(per.values()) / 1000.0 / ops,
        "cores": sum(per.values()) / 1e9 / (t_b - t_a),
        "mean_batch": float(batch.group(1)) if batch else 0.0,
        "inline": int(inline.group(1)) if inline else 0,
        "stats": stats.group(0) if stats else "",
    }


def multi_run(args, jobs, run_no):
    """--procs: P gpursa-latency processes at --rate each; CPU of all their threads."""
    env = dict(os.environ)
    env["OPENSSL_MODULES"] = args.modules
    env["GPURSA_STATS"] = "1"
    env.setdefault("GPURSA_MIN_GPU_BATCH", "1")
    env.pop("OPENSSL_CONF", None)
    if not args.real_host:
        env["GPURSA_BACKEND"] = "host"
        if args.latency_us:
            env["GPURSA_BENCH_INSTANT_US"] = str(args.latency_us)
        if args.shared:
            env["GPURSA_BENCH_INSTANT_SHARED"] = "1"
    cmd = [args.latency_tool, "--modules", args.modules, "--key", args.key, "--threads", "1",
           "--async-jobs", str(jobs), "--rate", str(args.rate), "--arrivals", "fixed",
           "--warmup", str(args.warmup), "--seconds", str(args.seconds + 2), "--no-compare"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(args.procs)]
    time.sleep(args.warmup + 0.5)
    s_a = {p.pid: thread_times(p.pid) for p in procs}
    t_a = time.monotonic()
    perf = None
    if args.perf:
        perf = subprocess.Popen(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "2000",
                                 "-p", ",".join(str(p.pid) for p in procs), "-o",
                                 f"{args.perf}.{jobs}.{run_no}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(args.seconds)
    s_b = {p.pid: thread_times(p.pid) for p in procs}
    t_b = time.monotonic()
    if perf is not None:
        perf.send_signal(signal.SIGINT)
        perf.wait()
    per = {g: 0 for g in GROUPS}
    runs = {g: 0 for g in GROUPS}
    rate = batches = 0.0
    app_name = os.path.basename(args.latency_tool)[:15]     # the tool's threads
    for p in procs:
        out, err = p.communicate()
        text = out.decode(errors="replace") + err.decode(errors="replace")
        m = re.search(r"achieved=([\d.]+)/s", text)
        b = re.search(r"mean_batch=([\d.]+)", text)
        if p.returncode != 0 or m is None or b is None or "HUNG" in text:
            sys.stderr.write(text)
            raise SystemExit(f"gpursa-latency failed (rc {p.returncode}): {' '.join(cmd)}")
        if (b"BENCHMARK-ONLY instant backend" in err) == args.real_host:
            raise SystemExit(f"{args.modules}/gpursa.so is not the expected module")
        rate += float(m.group(1))
        if float(b.group(1)) > 0:
            batches += float(m.group(1)) / float(b.group(1))
        for tid, (name, ns, n) in s_b[p.pid].items():
            g = group_of(p.pid, tid, name, app_name)
            per[g] += ns - s_a[p.pid].get(tid, (name, 0, 0))[1]
            runs[g] += n - s_a[p.pid].get(tid, (name, 0, 0))[2]
    wall = t_b - t_a
    ops = rate * wall
    return {
        "jobs": jobs, "ops": int(ops), "secs": wall, "rate": rate, "wall": wall,
        "us": {g: per[g] / 1000.0 / ops for g in GROUPS},
        "total_us": sum(per.values()) / 1000.0 / ops,
        "batch_us": sum(per.values()) / 1000.0 / (batches * wall) if batches else 0.0,
        "cores": sum(per.values()) / 1e9 / wall,
        "mean_batch": rate / batches if batches else 0.0,
        "switches": {g: runs[g] / (batches * wall) for g in GROUPS} if batches else {},
        "inline": 0, "stats": "",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--openssl", default="openssl")
    ap.add_argument("--modules")
    ap.add_argument("--jobs", default="64,256")
    ap.add_argument("--bits", type=int, default=2048)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--latency-us", type=int, default=0)
    ap.add_argument("--real-host", action="store_true")
    ap.add_argument("--perf")
    ap.add_argument("--csv")
    ap.add_argument("--label", default="")
    ap.add_argument("--procs", type=int, default=0)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--latency-tool")
    ap.add_argument("--key")
    ap.add_argument("--shared", action="store_true")
    ap.add_argument("--warmup", type=float, default=3)
    args = ap.parse_args()
    if args.modules is None:
        args.modules = "provider/.libs" if args.real_host else "bench/instant/.libs"
    args.modules = os.path.abspath(args.modules)
    if not os.path.exists(os.path.join(args.modules, "gpursa.so")):
        raise SystemExit(f"no gpursa.so in {args.modules}")
    if args.procs:
        if args.latency_tool is None:
            args.latency_tool = "bench/gpursa-latency"
        if args.key is None:
            args.key = os.path.join(tempfile.mkdtemp(), f"rsa{args.bits}.pem")
            subprocess.run([args.openssl, "genpkey", "-algorithm", "RSA", "-pkeyopt",
                            f"rsa_keygen_bits:{args.bits}", "-out", args.key], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"# {os.cpu_count()} CPUs; backend {'host (real)' if args.real_host else 'instant'}"
          f"{f', latency {args.latency_us} us' if args.latency_us else ''}"
          f"{f', shared' if args.shared else ''}; rsa{args.bits}, {args.seconds} s per run"
          f"{f', {args.procs} processes at {args.rate:g}/s each' if args.procs else ''}"
          f", CPU time in us per signature{' (us/batch: all threads over batches)' if args.procs else ''}")
    print(f"{'jobs':>5} {'sign/s':>9} {'app':>7} {'disp':>7} {'runner':>7} {'cpuwk':>7} "
          f"{'other':>7} {'total':>7} {'cores':>5} {'batch':>6}"
          f"{' us/batch' if args.procs else ''}")
    run = multi_run if args.procs else one_run
    for jobs in [int(j) for j in args.jobs.split(",")]:
        runs = [run(args, jobs, i) for i in range(args.repeat)]
        runs.sort(key=lambda r: r["total_us"])
        r = runs[0]
        u = r["us"]
        print(f"{jobs:>5} {r['rate']:>9.0f} {u['app']:>7.2f} {u['gpursa-disp']:>7.2f} "
              f"{u['gpursa-run']:>7.2f} {u['gpursa-cpu']:>7.2f} {u['other']:>7.2f} "
              f"{r['total_us']:>7.2f} {r['cores']:>5.2f} {r['mean_batch']:>6.1f}"
              + (f" {r['batch_us']:>8.1f}" if args.procs else ""), flush=True)
        if args.repeat > 1:
            print(f"#   over {args.repeat} runs: app us/op "
                  + ", ".join(f"{x['us']['app']:.2f}" for x in runs)
                  + f" (median {statistics.median(x['us']['app'] for x in runs):.2f}); total "
                  + ", ".join(f"{x['total_us']:.2f}" for x in runs)
                  + f" (median {statistics.median(x['total_us'] for x in runs):.2f})")
        if args.procs and r["switches"]:
            sw = r["switches"]
            print(f"#   context switches a batch: app {sw['app']:.2f}, disp {sw['gpursa-disp']:.2f}, "
                  f"runner {sw['gpursa-run']:.2f}, cpu workers {sw['gpursa-cpu']:.2f}, "
                  f"other {sw['other']:.2f}, total {sum(sw.values()):.2f}")
        if r["inline"]:
            print(f"#   {r['inline']} operations ran inline on the CPU")
        if args.csv:
            new = not os.path.exists(args.csv)
            with open(args.csv, "a") as f:
                if new:
                    f.write("label,jobs,ops,sign_per_s,app_us,disp_us,runner_us,cpuwk_us,"
                            "other_us,total_us,cores,mean_batch\n")
                f.write(f"{args.label},{jobs},{r['ops']},{r['rate']:.0f},{u['app']:.3f},"
                        f"{u['gpursa-disp']:.3f},{u['gpursa-run']:.3f},{u['gpursa-cpu']:.3f},"
                        f"{u['other']:.3f},{r['total_us']:.3f},{r['cores']:.2f},"
                        f"{r['mean_batch']:.1f}\n")


if __name__ == "__main__":
    main()
