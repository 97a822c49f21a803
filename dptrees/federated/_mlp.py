"""A small numpy multilayer perceptron whose parameters are one flat vector.

The federated protocol (:class:`~dptrees.federated.DPAggregator`,
:func:`~dptrees.federated.run_federated`) moves one flat float64 vector between the
server and the clients; :class:`NumpyMLP` maps such a vector to a ReLU (or tanh) network
with a softmax output and trains it, and :class:`MLPClient` is the federated client that
trains it on its own data (Geyer, Klein & Nabi 2017 use a 784-600-100-10 perceptron on
MNIST).

Layout of the vector: for every layer in order, its weight matrix ``W`` of shape
``(n_in, n_out)`` in row-major order, then its bias ``b`` of shape ``(n_out,)``.

Precision: the vector API is float64. :meth:`NumpyMLP.loss_and_gradient` computes in
float64 (exact enough for finite-difference checks); :meth:`NumpyMLP.local_sgd` and the
predictions compute in ``compute_dtype`` (float32 by default, about twice as fast) and
convert back to float64: local SGD runs on a float32 copy and returns
``vector + (trained copy - starting copy)``, so the change is exactly the float32
training's change and the float64 starting point is kept.
"""

import math

import numpy as np

from dptrees._random import check_random_state
from dptrees.federated._simulation import FederatedClient

__all__ = ["MLPClient", "NumpyMLP"]


class NumpyMLP:
    """Multilayer perceptron (ReLU or tanh) with a softmax output, on one flat vector.

    The object holds only the architecture; the parameters are always passed in as a
    flat float64 vector (see the module docstring for the layout).

    Parameters
    ----------
    layer_sizes : sequence of int, default=(784, 600, 100, 10)
        Input dimension, hidden widths, number of classes (at least 2 entries; the last
        at least 2).
    random_state : None, int, SeedSequence, BitGenerator or Generator
        Seeds :meth:`init_vector` (the initial model is public: it must not depend on
        any client's data).
    compute_dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        Arithmetic of :meth:`local_sgd` and of the predictions.
    activation : {"relu", "tanh"}, default="relu"
        Activation of the hidden layers. A bounded activation keeps the gradients
        from growing with the activations, which Papernot et al. (2021, "tempered
        sigmoids") found to help DP-SGD; on the non-IID MNIST federation of
        ``experiments/reproduce_geyer2017.py`` tanh learned more slowly than ReLU.

    Attributes
    ----------
    n_params : int
        Length of the parameter vector.
    n_classes : int
    """

    def __init__(self, layer_sizes=(784, 600, 100, 10), random_state=None,
                 compute_dtype=np.float32, activation="relu"):
        sizes = tuple(int(s) for s in layer_sizes)
        if len(sizes) < 2 or any(s < 1 for s in sizes) or sizes[-1] < 2:
            raise ValueError(f"layer_sizes must be >= 2 positive ints ending with >= 2 "
                             f"classes, got {layer_sizes!r}")
        self.layer_sizes = sizes
        self.random_state = random_state
        self.compute_dtype = np.dtype(compute_dtype)
        if self.compute_dtype not in (np.float32, np.float64):
            raise ValueError("compute_dtype must be float32 or float64")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, "
                             f"got {activation!r}")
        self.activation = activation
        self._slices = []
        offset = 0
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            w = (offset, offset + n_in * n_out, (n_in, n_out))
            offset += n_in * n_out
            b = (offset, offset + n_out, (n_out,))
            offset += n_out
            self._slices.append((w, b))
        self.n_params = offset
        self.n_classes = sizes[-1]

    # -- vector <-> layers --------------------------------------------------------------

    def unpack(self, vector):
        """Views ``[(W_1, b_1), ..., (W_L, b_L)]`` into ``vector`` (no copy).

        Parameters
        ----------
        vector : ndarray of shape (n_params,)

        Returns
        -------
        list of (ndarray, ndarray)
        """
        v = self._check_vector(vector)
        return [(v[w0:w1].reshape(ws), v[b0:b1].reshape(bs))
                for (w0, w1, ws), (b0, b1, bs) in self._slices]

    def pack(self, layers):
        """The flat float64 vector of ``[(W_1, b_1), ..., (W_L, b_L)]``."""
        if len(layers) != len(self._slices):
            raise ValueError(f"expected {len(self._slices)} layers, got {len(layers)}")
        out = np.empty(self.n_params)
        for (W, b), ((w0, w1, ws), (b0, b1, bs)) in zip(layers, self._slices):
            if np.shape(W) != ws or np.shape(b) != bs:
                raise ValueError(f"layer shapes {np.shape(W)}, {np.shape(b)}; expected "
                                 f"{ws}, {bs}")
            out[w0:w1] = np.ravel(W)
            out[b0:b1] = b
        return out

    def init_vector(self):
        """Initial parameters: He-normal weights for ReLU hidden layers, Glorot-normal
        for tanh hidden layers and for the output layer, zero biases, drawn from
        ``random_state`` only (public).

        Returns
        -------
        ndarray of float64, shape (n_params,)
        """
        rng = check_random_state(self.random_state)
        layers = []
        n_layers = len(self._slices)
        for i, ((_, _, ws), (_, _, bs)) in enumerate(self._slices):
            n_in, n_out = ws
            he = i < n_layers - 1 and self.activation == "relu"
            std = math.sqrt(2.0 / n_in) if he else math.sqrt(2.0 / (n_in + n_out))
            layers.append((rng.standard_normal(ws) * std, np.zeros(bs)))
        return self.pack(layers)

    # -- prediction ---------------------------------------------------------------------

    def predict_proba(self, vector, X, batch_size=4096):
        """Class probabilities, shape ``(n_samples, n_classes)``, float64.

        Computed in ``compute_dtype`` by blocks of ``batch_size`` rows.
        """
        X = self._check_X(X)
        layers = self._cast(self.unpack(vector), self.compute_dtype)
        out = np.empty((X.shape[0], self.n_classes))
        for start in range(0, X.shape[0], batch_size):
            block = X[start:start + batch_size].astype(self.compute_dtype, copy=False)
            out[start:start + batch_size] = _softmax(self._forward(layers, block)[-1])
        return out

    def predict(self, vector, X):
        """Predicted class indices ``0 .. n_classes - 1``, shape ``(n_samples,)``."""
        return np.argmax(self.predict_proba(vector, X), axis=1)

    def accuracy(self, vector, X, y):
        """Fraction of rows of ``X`` whose predicted class is ``y``."""
        return float(np.mean(self.predict(vector, X) == np.asarray(y)))

    # -- training -----------------------------------------------------------------------

    def loss_and_gradient(self, vector, X, y):
        """Mean softmax cross-entropy over the rows and its gradient, in float64.

        Parameters
        ----------
        vector : ndarray of shape (n_params,)
        X : ndarray of shape (n_samples, layer_sizes[0])
        y : ndarray of int, shape (n_samples,)
            Class indices in ``0 .. n_classes - 1``.

        Returns
        -------
        loss : float
        gradient : ndarray of float64, shape (n_params,)
        """
        X, y = self._check_Xy(X, y)
        layers = self._cast(self.unpack(vector), np.float64)
        grads = [(np.zeros_like(W), np.zeros_like(b)) for W, b in layers]
        loss = self._step(layers, X.astype(np.float64, copy=False), y, 1.0, grads)
        return loss, self.pack(grads)

    def local_sgd(self, vector, X, y, epochs, batch_size, learning_rate, rng=None):
        """Mini-batch SGD on ``(X, y)`` from ``vector``; returns the trained vector.

        Every epoch visits the rows in a fresh random order, in batches of
        ``batch_size`` (the last one may be smaller); each batch takes one step of
        ``learning_rate`` times the gradient of its mean cross-entropy.

        Parameters
        ----------
        vector : ndarray of shape (n_params,)
        X : ndarray of shape (n_samples, layer_sizes[0])
        y : ndarray of int, shape (n_samples,)
        epochs : int
        batch_size : int
        learning_rate : float
        rng : None, int, SeedSequence, BitGenerator or Generator
            Drives the shuffling.

        Returns
        -------
        ndarray of float64, shape (n_params,)
        """
        return np.asarray(vector, dtype=np.float64) + self._sgd_delta(
            vector, X, y, epochs, batch_size, learning_rate, rng)

    def _sgd_delta(self, vector, X, y, epochs, batch_size, learning_rate, rng,
                   transform=None):
        """``local_sgd(...) - vector``, computed without float64 cancellation.

        ``transform(X, rng)``, if given, makes each epoch's copy of the features (local
        data augmentation).
        """
        X, y = self._check_Xy(X, y)
        epochs = int(epochs)
        batch_size = int(batch_size)
        if epochs < 0 or batch_size < 1:
            raise ValueError("epochs must be >= 0 and batch_size >= 1")
        if not (math.isfinite(learning_rate) and learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}")
        rng = check_random_state(rng)
        dtype = self.compute_dtype
        start = np.asarray(vector, dtype=np.float64).astype(dtype)
        work = start.copy()
        layers = self.unpack(work)  # views: the steps update ``work`` in place
        Xc = X.astype(dtype, copy=False)
        n = X.shape[0]
        for _ in range(epochs):
            Xe = Xc if transform is None else np.asarray(transform(Xc, rng), dtype=dtype)
            if Xe.shape != Xc.shape:
                raise ValueError(f"transform changed the feature shape from {Xc.shape} "
                                 f"to {Xe.shape}")
            order = rng.permutation(n)
            for b0 in range(0, n, batch_size):
                idx = order[b0:b0 + batch_size]
                self._step(layers, Xe[idx], y[idx], learning_rate, None)
        work -= start
        return work.astype(np.float64)

    # -- internals ----------------------------------------------------------------------

    def _forward(self, layers, X):
        """Activations ``[X, A_1, ..., A_{L-1}, Z_L]`` (the last one: logits)."""
        activate = _ACTIVATIONS[self.activation][0]
        acts = [X]
        A = X
        last = len(layers) - 1
        for i, (W, b) in enumerate(layers):
            Z = A @ W
            Z += b
            if i < last:
                activate(Z)
            acts.append(Z)
            A = Z
        return acts

    def _step(self, layers, X, y, learning_rate, grads):
        """Forward and backward pass on a batch; returns the batch's mean loss.

        With ``grads`` (a list of ``(dW, db)`` arrays), writes the gradient there and
        leaves ``layers`` alone; without it, takes the SGD step ``layers -= learning_rate
        * gradient`` in place (the learning rate folded into the output error, so each
        weight matrix gets one matrix product and one subtraction).
        """
        acts = self._forward(layers, X)
        scale_by_derivative = _ACTIVATIONS[self.activation][1]
        logits = acts[-1]
        n = X.shape[0]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(shifted).sum(axis=1))
        rows = np.arange(n)
        loss = float(np.mean(log_norm - shifted[rows, y]))
        delta = np.exp(shifted - log_norm[:, None])  # softmax
        delta[rows, y] -= 1.0
        delta *= (1.0 if grads is not None else learning_rate) / n  # dLoss/dZ_L (x lr)
        for i in range(len(layers) - 1, -1, -1):
            W, b = layers[i]
            A_prev = acts[i]
            if i > 0:  # error of the previous layer, before W changes
                delta_prev = delta @ W.T
                scale_by_derivative(delta_prev, A_prev)
            if grads is not None:
                np.matmul(A_prev.T, delta, out=grads[i][0])
                grads[i][1][...] = delta.sum(axis=0)
            else:
                W -= A_prev.T @ delta
                b -= delta.sum(axis=0)
            if i > 0:
                delta = delta_prev
        return loss

    @staticmethod
    def _cast(layers, dtype):
        return [(W.astype(dtype, copy=False), b.astype(dtype, copy=False)) for W, b in layers]

    def _check_vector(self, vector):
        v = np.asarray(vector)
        if v.shape != (self.n_params,):
            raise ValueError(f"vector has shape {v.shape}, expected ({self.n_params},)")
        if v.dtype.kind != "f":
            v = v.astype(np.float64)
        return v

    def _check_X(self, X):
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.layer_sizes[0]:
            raise ValueError(f"X must have shape (n, {self.layer_sizes[0]}), got {X.shape}")
        if X.dtype.kind != "f":
            X = X.astype(np.float64)
        return X

    def _check_Xy(self, X, y):
        X = self._check_X(X)
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
        if y.size and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= self.n_classes):
            raise ValueError(f"y must hold class indices in [0, {self.n_classes})")
        return X, y.astype(np.intp, copy=False)


def _relu_inplace(Z):
    np.maximum(Z, 0, out=Z)


def _relu_backward(delta, A):
    delta *= A > 0  # A = max(Z, 0), so Z > 0 iff A > 0


def _tanh_inplace(Z):
    np.tanh(Z, out=Z)


def _tanh_backward(delta, A):
    delta *= 1 - A * A  # d tanh(Z) / dZ = 1 - tanh(Z)^2, from the output A alone


#: activation name -> (in-place forward on the pre-activation Z, in-place scaling of the
#: error by the derivative, computed from the activation's output A)
_ACTIVATIONS = {"relu": (_relu_inplace, _relu_backward),
                "tanh": (_tanh_inplace, _tanh_backward)}


def _softmax(logits):
    z = logits - logits.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


class MLPClient(FederatedClient):
    """A federated client: local SGD of a :class:`NumpyMLP` on its own ``(X, y)``.

    Parameters
    ----------
    model : NumpyMLP
        The shared architecture.
    X : ndarray of shape (n_samples, model.layer_sizes[0])
        This client's features (kept as given; float32 saves memory and a copy).
    y : ndarray of int, shape (n_samples,)
    epochs : int, default=1
        Local epochs per round.
    batch_size : int, default=10
    learning_rate : float, default=0.05
    random_state : None, int, SeedSequence, BitGenerator or Generator
        This client's shuffling stream (local: it never leaves the client).
    transform : callable, optional
        ``transform(X, rng) -> X'`` of the same shape, applied to the client's features
        at the start of every local epoch (data augmentation, e.g. random shifts of
        images), with the client's own random stream. It is part of the client's local
        computation: the update is clipped and noised as any other, so the privacy
        guarantee does not depend on it.
    """

    def __init__(self, model, X, y, *, epochs=1, batch_size=10, learning_rate=0.05,
                 random_state=None, transform=None):
        self.model = model
        self.X, self.y = model._check_Xy(X, y)
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.transform = transform
        self._rng = check_random_state(random_state)

    @property
    def n_samples(self):
        return self.X.shape[0]

    def update(self, global_vector, round_index):
        """``local_sgd(global_vector, ...) - global_vector``: this round's proposed change.

        Computed as the change of the float32 training copy (see the module docstring),
        which equals that difference without float64 cancellation. None for a client
        without records (it takes no part).
        """
        if self.n_samples == 0:
            return None
        return self.model._sgd_delta(global_vector, self.X, self.y, self.epochs,
                                     self.batch_size, self.learning_rate, self._rng,
                                     transform=self.transform)
