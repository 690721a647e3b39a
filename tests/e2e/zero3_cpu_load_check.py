"""Does ``from_pretrained`` under DeepSpeed ZeRO-3 load every parameter exactly? One JSON line says.

Run on 2 CPU processes (gloo), one run at a time::

    .venv/bin/torchrun --nproc_per_node 2 tests/e2e/zero3_cpu_load_check.py MODEL [--fix wait-all|sequential]

The model is built as transformers builds it when ``TrainingArguments`` has a ZeRO-3 ``deepspeed`` config
(``HfDeepSpeedConfig`` alive, then ``AutoModelForCausalLM.from_pretrained``: ``deepspeed.zero.Init``, then each
module loaded by rank 0 inside ``GatheredParameters(modifier_rank=0)``). Every parameter is then gathered, one at
a time (DeepSpeed's blocking path, so the check cannot race), and compared with the safetensors file. The line
names each parameter that differs, with its largest difference, and each parameter whose all-gather was still
running when DeepSpeed's ``Init._allgather_params_coalesced`` had returned (exit status 1 if any differ).

Finding (DeepSpeed 0.18.9, torch 2.13.0+cpu, gloo): ``_allgather_params_coalesced``
(``deepspeed/runtime/zero/partition_parameters.py:1897``) starts one async all-gather per parameter and waits on
the last handle only (``launch_handles[-1].wait()``, line 1984), then hands out the buffers. That is safe on
NCCL, whose collectives run in issue order on one stream (and ``torch.cuda.synchronize()`` follows, line 1998),
but gloo runs async work on 2 threads in any order, and the CPU accelerator's ``synchronize()`` is a no-op
(``resolves_data_dependency()`` is True). DeepSpeed takes that path when it gathers more than one parameter at
once (line 1623): on loading, a module with a bias (Qwen2's q/k/v projections). Rank 0 copies the file's weight
into the buffer, and the late all-gather then writes the parameter's partitions from before loading over it
(never-initialized memory, since transformers builds the model under ``no_init_weights``: 0.07 off here, 1e37
there); the broadcast on exit spreads that to every rank. In each failing run below whose late all-gathers were
recorded (5 of 6), the wrong parameters were among them. Fixed upstream by deepspeedai/DeepSpeed#8539 (wait for
every handle), first released in DeepSpeed 0.19.8 (0.19.7 lacks it); ms-swift 4.6 wants <0.19.

``--fix wait-all`` waits for every handle before the caller uses the buffers (the upstream fix);
``--fix sequential`` sets the config key ``zero_optimization.stage3_allgather_sequential`` (the workaround for a
CPU run), which makes DeepSpeed gather one parameter at a time with blocking calls.

Measured on this project's 2-core CPU machine beside other jobs (tiny Qwen2.5-shaped model from
``python -m swift_plugins tiny-model``), the three modes in turn: as installed, 6 of 23 runs loaded a wrong
parameter (a q/k/v projection's weight, off by 0.066 to 1.0e37); ``--fix wait-all`` 0 of 20; ``--fix
sequential`` 0 of 19.
"""

import argparse
import json
import sys


def worst_differences(expected: dict, actual: dict) -> dict:
    """The largest absolute difference of each parameter that is not exactly equal to its expected value.

    >>> import torch
    >>> expected = {"a": torch.ones(2), "b": torch.zeros(1)}
    >>> worst_differences(expected, {"a": torch.tensor([1.0, 1.5]), "b": torch.zeros(1)})
    {'a': 0.5}
    """
    return {
        name: float((actual[name].double() - value.double()).abs().max())
        for name, value in expected.items()
        if not (actual[name].shape == value.shape and actual[name].equal(value))
    }


def zero3_config(world_size: int, sequential: bool) -> dict:
    """A ZeRO-3 config with swift's zero3.json settings that matter here, and concrete batch sizes.

    >>> zero3_config(2, True)["zero_optimization"]["stage3_allgather_sequential"]
    True
    """
    return {
        "train_batch_size": world_size,
        "train_micro_batch_size_per_gpu": 1,
        "gradient_accumulation_steps": 1,
        "zero_optimization": {"stage": 3, "overlap_comm": False, "stage3_allgather_sequential": sequential},
    }


def watch_coalesced_gathers(wait_all: bool) -> list:
    """The ``ds_id`` of each parameter whose all-gather was still running when ``_allgather_params_coalesced``
    returned, one list per call; with ``wait_all`` it then waits for them (the fix)."""
    import deepspeed.comm
    from deepspeed.runtime.zero.partition_parameters import Init

    started, still_running = [], []
    start_gather, gather_coalesced = deepspeed.comm.all_gather_into_tensor, Init._allgather_params_coalesced

    def recording_start(*args, **kwargs):
        work = start_gather(*args, **kwargs)
        started.append(work)
        return work

    def watched_gather_coalesced(self, param_list, *args, **kwargs):
        started.clear()
        result = gather_coalesced(self, param_list, *args, **kwargs)
        if param_list:  # DeepSpeed calls it for the quantized parameters too, mostly none
            late = zip(param_list, started, strict=True)
            still_running.append([param.ds_id for param, work in late if not work.is_completed()])
        if wait_all:
            for work in started:
                work.wait()
        return result

    deepspeed.comm.all_gather_into_tensor = recording_start
    Init._allgather_params_coalesced = watched_gather_coalesced
    return still_running


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a folder with config.json and model.safetensors")
    parser.add_argument("--fix", choices=["wait-all", "sequential"], help="the change to try (default: none)")
    args = parser.parse_args(argv)

    import deepspeed
    import torch
    import torch.distributed as torch_dist
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM
    from transformers.integrations import HfDeepSpeedConfig

    deepspeed.init_distributed()
    world_size, rank = torch_dist.get_world_size(), torch_dist.get_rank()
    still_running = watch_coalesced_gathers(wait_all=args.fix == "wait-all")
    keep_alive = HfDeepSpeedConfig(zero3_config(world_size, sequential=args.fix == "sequential"))  # noqa: F841
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)

    names = {parameter.ds_id: name for name, parameter in model.named_parameters()}
    expected = load_file(f"{args.model}/model.safetensors")
    actual = {}
    for name, parameter in model.named_parameters():
        if name in expected:
            with deepspeed.zero.GatheredParameters(parameter):
                actual[name] = parameter.data.detach().clone()
    per_rank = [None] * world_size
    torch_dist.all_gather_object(per_rank, worst_differences({k: expected[k] for k in actual}, actual))
    if rank == 0:
        report = {
            "fix": args.fix,
            "world_size": world_size,
            "backend": torch_dist.get_backend(),
            "compared": len(actual),
            "differ": per_rank,
            "coalesced_gathers": len(still_running),
            "still_running": [names[ds_id] for late in still_running for ds_id in late],
        }
        print(json.dumps(report), flush=True)
    torch_dist.barrier()
    torch_dist.destroy_process_group()
    return 1 if any(per_rank) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
