"""paddle-plan: the cluster-scale search (paddle_mlir.plan) against the
expert recipe priced by the same model, its stage cutting against brute
force, and its command line's errors."""

import itertools
import json

import numpy as np
import pytest

from paddle_mlir import plan


def brute_force_cut(times, weights, acts, p, m, memory):
    best = None
    L = len(times)
    for cuts in itertools.combinations(range(1, L), p - 1):
        bounds = (0, *cuts, L)
        stages = [range(bounds[i], bounds[i + 1]) for i in range(p)]
        if any(sum(weights[k] for k in s) + min(p - i, m) * sum(acts[k] for k in s) > memory
               for i, s in enumerate(stages)):
            continue
        worst = max(sum(times[k] for k in s) for s in stages)
        if best is None or worst < best:
            best = worst
    return best


@pytest.mark.parametrize("seed", range(6))
def test_stage_cut_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(3, 9))
    times = list(rng.uniform(1, 5, L))
    weights = list(rng.uniform(1, 3, L))
    acts = list(rng.uniform(0.5, 2, L))
    for p in range(1, L + 1):
        for memory in (8.0, 15.0, 100.0):
            want = brute_force_cut(times, weights, acts, p, 4, memory)
            got = plan.stage_cut(times, weights, acts, p, 4, memory)
            if want is None:
                assert got is None
            else:
                assert got is not None and got[0] == pytest.approx(want)
                assert len(got[1]) == p - 1


def test_gpt_plan_is_no_slower_than_the_expert_and_fits(tmp_path):
    r = plan.search(plan.ZOO["gpt3-1.3b"], "h200-8x1")
    p, e = r["plan"], r["expert"]
    assert p is not None and e is not None
    assert p.step_s <= e.step_s * (1 + 1e-12)
    assert p.memory_bytes <= 141e9 and e.memory_bytes <= 141e9
    assert p.tensor * p.data * p.pipeline == 8
    assert e.tensor == 8 and e.microbatch == 1
    assert r["search_s"] < 60
    assert "the expert spends" in plan.why(p, e)
    # The whole command: prints both plans, writes the JSON.
    out = tmp_path / "plan.json"
    assert plan.main(["gpt3-1.3b", "--cluster", "h200-8x1", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["plan"]["step_s"] <= doc["expert"]["step_s"]


def test_no_plan_fits(capsys):
    # 175B parameters need 2.8 TB of weights and Adam state: more than a
    # node of 8 x 141 GB holds, whatever the split.
    assert plan.main(["gpt3-175b", "--cluster", "h200-8x1"]) == 1
    assert "no plan fits" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["gpt5", "--cluster", "h200-8x1"], "unknown model 'gpt5'"),
    (["gpt3-1.3b", "--cluster", "nowhere"], "unknown cluster 'nowhere'"),
    (["gpt3-1.3b", "--cluster", "h200-8x1", "--global-batch", "0"],
     "--global-batch must be > 0"),
])
def test_command_line_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        plan.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
