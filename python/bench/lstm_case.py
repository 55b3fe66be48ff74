"""The benchmark's case "lstm" (python/bench/time_vs_permutation.py): issue
34's costly model. An LSTM (D inputs -> 32 hidden units, then a linear
layer on the last step's hidden state) trained with PyTorch on the CPU, one
thread, on 2000 x 12 x 48 regression data by default with 3 relevant
features: each relevant feature carries, over its own window of L // 6
steps, a per-instance level z (standard normal) added to its noise, and
the target is a weighted sum of the 3 levels plus noise (SD 0.1).

Training is short and seeded (torch.manual_seed and a seeded shuffle):
--epochs passes (12 by default) of Adam (learning rate 0.01) over
minibatches of 50, on a training set of the same shape drawn first from the
generator. The model is explained, as TIME and the yardstick are meant to
be used, on a test set it never saw, drawn next from the same generator:
a network explained on its own training data is scored on what it
memorised (permuting a noise feature it fitted raises that data's loss,
not a fresh set's). The fit is reported as R^2 on both sets.
The script runs it on one thread (torch.set_num_threads(1), and
OPENBLAS_NUM_THREADS=1 for the BLAS PyTorch calls). predict is written as
a PyTorch user would: the NumPy batch as a float32
tensor, (instances, timesteps, features), one forward pass under no_grad.
"""

import numpy as np

DEFAULT_SHAPE = (2000, 12, 48)
DEFAULT_RELEVANT = 3
HIDDEN = 32


def generate(rng, m, d, l, k):
    """Data, targets and the truth (features, windows)."""
    feats = [int(round((i + 0.5) * d / k)) for i in range(k)]
    length = max(1, l // 6)
    windows = [(int((i + 1) * (l - length) / (k + 1)), int((i + 1) * (l - length) / (k + 1)) + length - 1)
               for i in range(k)]
    weights = np.array([(1.0 if i % 2 == 0 else -1.0) * (1.0 + 0.25 * i) for i in range(k)])
    X = rng.normal(size=(m, d, l))
    Z = rng.normal(size=(m, k))
    for i, (j, (s, e)) in enumerate(zip(feats, windows)):
        X[:, j, s:e + 1] += Z[:, i:i + 1]
    y = Z @ weights + rng.normal(scale=0.1, size=m)
    return X, y, feats, windows


def r2(y, p):
    return 1.0 - float(((y - p) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())


def make(shape, relevant, seed, args):
    """The case: the test set and its targets, the trained model's predict
    and the truth."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    m, d, l = shape
    rng = np.random.default_rng(seed)
    Xtr, ytr, feats, windows = generate(rng, m, d, l, relevant)
    X, y, _, _ = generate(rng, m, d, l, relevant)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(d, HIDDEN, batch_first=True)
            self.linear = torch.nn.Linear(HIDDEN, 1)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.linear(out[:, -1]).squeeze(-1)

    net = Net()
    mu, sd = float(ytr.mean()), float(ytr.std())

    def predict(batch):
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(batch, dtype=np.float32)).permute(0, 2, 1)
            return net(x).numpy().astype(np.float64) * sd + mu

    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    xt = torch.from_numpy(Xtr.astype(np.float32)).permute(0, 2, 1).contiguous()
    yt = torch.from_numpy(((ytr - mu) / sd).astype(np.float32))
    shuffle = torch.Generator().manual_seed(seed)
    for _ in range(args.epochs):
        order = torch.randperm(m, generator=shuffle)
        for i in range(0, m, 50):
            idx = order[i:i + 50]
            opt.zero_grad()
            loss = ((net(xt[idx]) - yt[idx]) ** 2).mean()
            loss.backward()
            opt.step()
    net.eval()
    info = {"model": "LSTM %d -> %d hidden, then a linear layer (PyTorch %s, CPU, %d thread)"
                     % (d, HIDDEN, torch.__version__, torch.get_num_threads()),
            "epochs": args.epochs, "train_r2": r2(ytr, predict(Xtr)), "test_r2": r2(y, predict(X))}
    return X, y, predict, feats, windows, info
