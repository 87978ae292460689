"""The soak in CI: tools/soak.py with 10,000 invokes of MobileNet v1 0.25
(fully delegated) in a child process: outputs bit-identical run to run, the
first agreeing with the CPU, host RSS and GPU buffers flat (about 100 s on
llvmpipe, which the 90-minute CI budget affords); see docs/reliability.md."""

from isolation import REPO, run_isolated


def test_repeated_invokes_are_bit_identical_and_hold_memory_flat():
    result = run_isolated("", args=[str(REPO / "tools" / "soak.py"), "--invokes", "10000"],
                          timeout=900)
    lines = [line for line in result.stdout.splitlines() if line.startswith("soak:")]
    print("\n" + "\n".join(lines))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "0 outputs not bit-identical" in result.stdout, result.stdout
    assert "31/31 nodes delegated" in result.stdout, "MobileNet is no longer fully delegated"
