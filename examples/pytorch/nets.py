"""The networks of the learned-model example and how they are trained.

Every network reads raw data of shape (m, D, L), the layout tempora uses
(instances x features x timesteps), standardises each feature with the
training split's mean and SD (kept as buffers, so the network explained is a
function of the raw data), and returns one logit per instance.
"""

import numpy as np
import torch
from torch import nn

ARCHITECTURES = ("lstm", "cnn")


def configure_torch(threads):
    """Fixes torch's intra-op thread count and asks for deterministic kernels.

    CPU results are reproducible for a fixed thread count; reductions split
    across a different number of threads may round differently in the last
    bits (see examples/pytorch/README.md).
    """
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)


def _linear(x, weight, bias):
    """x @ weight.T + bias, through oneDNN when torch has it.

    Debian's python3-torch links the reference BLAS, whose matrix products are
    several times slower than oneDNN's (mkldnn) for the LSTM's shapes, and
    prediction speed decides how long an explanation takes.
    """
    if not torch.backends.mkldnn.is_available():
        return nn.functional.linear(x, weight, bias)
    if bias is None:
        bias = x.new_zeros(weight.shape[0])
    y = torch._C._nn.mkldnn_linear(x.contiguous().to_mkldnn(), weight.to_mkldnn(), bias.to_mkldnn())
    return y.to_dense()


class _Standardise(nn.Module):
    def __init__(self, mean, sd):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32).view(1, -1, 1))
        self.register_buffer("sd", torch.as_tensor(sd, dtype=torch.float32).view(1, -1, 1))

    def forward(self, x):
        return (x - self.mean) / self.sd


class LSTMNet(nn.Module):
    """One LSTM layer over the timesteps; the last hidden state feeds a linear logit."""

    def __init__(self, n_features, mean, sd, hidden=32):
        super().__init__()
        self.std = _Standardise(mean, sd)
        self.rnn = nn.LSTM(n_features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        z = self.std(x).transpose(1, 2)  # (m, L, D)
        _, (h, _) = self.rnn(z)
        return self.out(h[-1]).squeeze(1)

    def infer(self, x):
        """The forward pass without gradients, unrolled by hand so that its
        matrix products run in oneDNN (see _linear); equal to forward up to
        float rounding (tested)."""
        m, _, steps = x.shape
        z = self.std(x).transpose(1, 2).reshape(m * steps, -1)
        hidden = self.rnn.hidden_size
        xi = _linear(z, self.rnn.weight_ih_l0, self.rnn.bias_ih_l0 + self.rnn.bias_hh_l0).view(m, steps, 4 * hidden)
        h = x.new_zeros(m, hidden)
        c = x.new_zeros(m, hidden)
        for t in range(steps):
            g = xi[:, t] + _linear(h, self.rnn.weight_hh_l0, None)
            i, f, u, o = g.chunk(4, 1)  # PyTorch's gate order: input, forget, cell, output
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(u)
            h = torch.sigmoid(o) * torch.tanh(c)
        return self.out(h).squeeze(1)


class CNNNet(nn.Module):
    """Two 1-D convolutions over time (kernel 5, same padding) and a linear logit over the flattened maps.

    The flattening keeps the position of every timestep, so the network can
    learn where in the sequence a feature matters, as the generator's windows
    require.
    """

    def __init__(self, n_features, mean, sd, channels=16, timesteps=20):
        super().__init__()
        self.std = _Standardise(mean, sd)
        self.conv = nn.Sequential(
            nn.Conv1d(n_features, channels, 5, padding=2), nn.ReLU(),
            nn.Conv1d(channels, channels, 5, padding=2), nn.ReLU(),
        )
        self.out = nn.Linear(channels * timesteps, 1)

    def forward(self, x):
        return self.out(self.conv(self.std(x)).flatten(1)).squeeze(1)


def build(arch, n_features, timesteps, mean, sd, width):
    """Returns an untrained network of the named architecture ("lstm" or "cnn")."""
    if arch == "lstm":
        return LSTMNet(n_features, mean, sd, hidden=width)
    if arch == "cnn":
        return CNNNet(n_features, mean, sd, channels=width, timesteps=timesteps)
    raise ValueError("nets: unknown architecture %r (want one of %s)" % (arch, ", ".join(ARCHITECTURES)))


def train(arch, X, y, seed, epochs, width, batch=64, lr=3e-3):
    """Trains a network of the architecture on X (m, D, L) and labels y with Adam and binary cross-entropy.

    seed fixes the initial weights and the order of the minibatches. The
    network is returned in evaluation mode. No early stopping: a fixed number
    of epochs keeps the run reproducible and free of a tuning split.
    """
    if X.shape[1] == 0:
        raise ValueError("nets: no features to train on")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    mean = X.mean(axis=(0, 2))
    sd = X.std(axis=(0, 2))
    sd = np.where(sd < 1e-8, 1.0, sd)
    net = build(arch, X.shape[1], X.shape[2], mean, sd, width)
    xt = torch.as_tensor(X, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    lossf = nn.BCEWithLogitsLoss()
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(xt.shape[0], generator=gen)
        for i in range(0, xt.shape[0], batch):
            b = perm[i:i + batch]
            opt.zero_grad()
            loss = lossf(net(xt[b]), yt[b])
            loss.backward()
            opt.step()
    net.eval()
    return net


def predictor(net, features=None, batch=4096):
    """Returns predict(X) -> probabilities, the NumPy callable tempora explains.

    X has shape (m, D, L) in the problem's full feature layout; features, if
    given, are the columns the network was trained on.
    """
    cols = None if features is None else list(features)

    def predict(X):
        X = np.asarray(X)
        if cols is not None:
            X = X[:, cols, :]
        out = np.empty(X.shape[0], dtype=np.float64)
        with torch.no_grad():
            for i in range(0, X.shape[0], batch):
                xb = torch.as_tensor(X[i:i + batch], dtype=torch.float32)
                logit = net.infer(xb) if hasattr(net, "infer") else net(xb)
                out[i:i + batch] = torch.sigmoid(logit).double().numpy()
        return out

    return predict


class Factory:
    """Re-creates a trained network's predict in another process (tempora.explain's model_factory).

    It holds the network's weights (a state dict of tensors, which pickle),
    so it works under multiprocessing's "spawn" start method.
    """

    def __init__(self, arch, net, threads, features=None):
        self.arch = arch
        self.threads = threads
        self.features = None if features is None else list(features)
        self.state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.n_features = self.state["std.mean"].shape[1]
        self.width = net.rnn.hidden_size if arch == "lstm" else net.conv[0].out_channels
        self.timesteps = net.out.in_features // self.width if arch == "cnn" else 0

    def __call__(self):
        configure_torch(self.threads)
        net = build(self.arch, self.n_features, self.timesteps, np.zeros(self.n_features), np.ones(self.n_features), self.width)
        net.load_state_dict(self.state)
        net.eval()
        return predictor(net, self.features)
