#!/usr/bin/env python3
"""scripts/lce/torch_reference.py --vs-lce PATH with a missing or bad library (s12-lcevs): a sentence naming the path
and what is wrong, exit 2, before torch is imported (so this runs without torch and without a GPU).
Usage: tst_torch_reference_args.py PATH/torch_reference.py     Exit: 0 passed, 1 failed."""
import os
import subprocess
import sys
import tempfile

failed = 0


def expect(ok, what):
    global failed
    print(f"{'PASS' if ok else 'FAIL'} {what}", flush=True)
    failed += not ok


def run(script, *args):
    # torch must not be needed: hide it (an installed torch would otherwise be imported if the check came too late)
    env = dict(os.environ, PYTHONPATH=HIDE)
    p = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, p.stdout + p.stderr


def main():
    global HIDE
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        # a torch package that fails on import: the checks must come before `import torch`
        HIDE = d
        os.makedirs(os.path.join(d, "torch"))
        with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
            f.write("raise ImportError('tst_torch_reference_args: torch imported before --vs-lce was checked')\n")
        missing = os.path.join(d, "no-such-dir", "liblce_capi.so")
        rc, out = run(script, "--vs-lce", missing)
        expect(rc == 2 and f"--vs-lce {missing}: no such file" in out and "torch imported" not in out,
               f"missing path: exit 2 and says so (rc {rc}: {out.strip().splitlines()[-1] if out.strip() else ''})")
        text = os.path.join(d, "liblce_capi.so")
        with open(text, "w") as f:
            f.write("not a library\n")
        rc, out = run(script, "--vs-lce", text)
        expect(rc == 2 and "not a shared library" in out, f"a text file: exit 2, 'not a shared library' (rc {rc})")
        rc, out = run(script, "--vs-lce", d)
        expect(rc == 2 and "not a file" in out, f"a folder: exit 2, 'not a file' (rc {rc})")
        rc, out = run(script, "--vs-lce", text, "--lce-rung", "7")
        expect(rc == 2 and "--lce-rung" in out, f"--lce-rung 7: exit 2 (rc {rc})")
        # a good-looking path gets past the checks to `import torch` (here the planted failing one): the checks do
        # not refuse everything
        elf = os.path.join(d, "fake.so")
        with open(elf, "wb") as f:
            f.write(b"\x7fELF" + bytes(60))
        rc, out = run(script, "--vs-lce", elf)
        expect(rc != 0 and "torch imported before --vs-lce was checked" in out,
               f"an ELF file passes the pre-torch checks (reaches the planted torch; rc {rc})")
    print(f"tst_torch_reference_args: {failed} failed")
    return 1 if failed else 0


HIDE = ""
if __name__ == "__main__":
    sys.exit(main())
