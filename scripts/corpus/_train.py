"""The step loop of the long training jobs (scripts/record_longjobs.sh): `setup()` once, then
`step(i)` for each step, under CUPTI when a truth path is given (scripts/corpus/_cupti.py),
and the one line they print: whether the loss decreased (traced and native runs compare it)."""
import torch

from _cupti import cupti_truth


def train(steps, step, truth_path, setup=None):
    """step(i) returns the step's loss tensor."""
    first = loss = None
    with cupti_truth(truth_path):
        if setup is not None:
            setup()
        for i in range(steps):
            loss = step(i)
            if first is None:
                first = loss.item()
        torch.cuda.synchronize()
    print(f"steps={steps} loss_decreased={loss.item() < first}")
