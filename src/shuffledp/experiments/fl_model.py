"""The small CNN of the PIC paper's federated-learning experiment (§7.3, Table 4) in JAX, with per-user gradients.

Needs the optional extra ``shuffledp[fl]`` (JAX and optax, CPU wheels): ``pip install 'shuffledp[fl]'``.
Only `shuffledp.experiments.pic_fl_incentives` imports this module, inside its run.

Table 4 (28x28 MNIST, d = 4,292 parameters): convolution of 8 filters 4x4 stride 2,
2x2 max-pooling, convolution of 6 filters 5x5 stride 2, 2x2 max-pooling, softmax over 10
units.  Adapted to the 8x8 digits: the same layers, filters and pooling, but stride 1 in
both convolutions ('SAME' padding), since strides of 2 and two poolings would shrink 8x8
to a single pixel; 8x8 -> conv 8@4x4 -> 8x8x8 -> pool -> 4x4x8 -> conv 6@5x5 -> 4x4x6 ->
pool -> 2x2x6 -> dense 10: d = 136 + 1,206 + 250 = 1,592 parameters.  Inputs of 28x28 or
more (MNIST's own files) keep the paper's strides of 2.  The paper names no activation:
ReLU after each convolution.

`FlModel.per_user_gradients` is ``jax.vmap(jax.grad(loss))`` over the users (one sample
each), jitted; parameters travel as one flat float32 vector (``ravel_pytree``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.flatten_util import ravel_pytree

__all__ = ["FlModel", "adam", "cnn_parameter_count", "make_cnn"]

#: Table 4: (filters, kernel) of the two convolutions; 10 softmax units.
CONV_LAYERS = ((8, 4), (6, 5))
CLASSES = 10
#: Images at least this wide keep Table 4's stride of 2 (MNIST); smaller ones (8x8 digits) use stride 1.
PAPER_STRIDE_MIN_WIDTH = 28


def _stride(width: int) -> int:
    return 2 if width >= PAPER_STRIDE_MIN_WIDTH else 1


def _pool(x: jnp.ndarray) -> jnp.ndarray:
    """2x2 max-pooling, stride 2, 'SAME' padding (NHWC)."""
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")


def _conv(x: jnp.ndarray, w: jnp.ndarray, b: jnp.ndarray, stride: int) -> jnp.ndarray:
    y = jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y + b)


def _features(params: dict[str, Any], x: jnp.ndarray, stride: int) -> jnp.ndarray:
    for i in range(len(CONV_LAYERS)):
        x = _pool(_conv(x, params[f"conv{i}_w"], params[f"conv{i}_b"], stride))
    return x.reshape(x.shape[0], -1)


def _init(shape: tuple[int, int], rng: np.random.Generator) -> dict[str, Any]:
    """He-normal weights (fan-in), zero biases, from ``rng`` (so a run's seed fixes the initial model)."""
    height, width = shape
    stride = _stride(width)
    params: dict[str, Any] = {}
    channels = 1
    for i, (filters, kernel) in enumerate(CONV_LAYERS):
        fan_in = kernel * kernel * channels
        params[f"conv{i}_w"] = rng.normal(0.0, np.sqrt(2.0 / fan_in), (kernel, kernel, channels, filters))
        params[f"conv{i}_b"] = np.zeros(filters)
        channels = filters
    flat = int(_features(params, jnp.zeros((1, height, width, 1)), stride).shape[1])
    params["dense_w"] = rng.normal(0.0, np.sqrt(1.0 / flat), (flat, CLASSES))
    params["dense_b"] = np.zeros(CLASSES)
    return {k: jnp.asarray(v, dtype=jnp.float32) for k, v in params.items()}


@dataclass(frozen=True)
class FlModel:
    """The CNN for images of one shape: its initial flat parameters and jitted functions of flat parameters."""

    image_shape: tuple[int, int]
    stride: int  # of both convolutions: Table 4's 2 for 28x28 or wider, 1 below
    initial: np.ndarray  # float32, shape (d,)
    loss: Callable[[Any, Any, Any], Any]  # (theta, X, y) -> mean cross-entropy
    per_user_gradients: Callable[[Any, Any, Any], Any]  # (theta, X (s,h,w), y (s,)) -> (s, d)
    mean_gradient: Callable[[Any, Any, Any], Any]  # (theta, X, y) -> (d,): gradient of the mean loss
    predict: Callable[[Any, Any], Any]  # (theta, X) -> labels

    @property
    def dim(self) -> int:
        """d, the number of trainable parameters."""
        return int(self.initial.size)

    @property
    def description(self) -> str:
        """What ran: the image size and the convolutions' stride, beside Table 4's."""
        height, width = self.image_shape
        if self.stride == 2:
            return f"Table 4 CNN on {height}x{width} images: stride 2 in both convolutions, as in the paper"
        return (
            f"Table 4 CNN adapted to {height}x{width}: stride {self.stride} instead of 2 in both convolutions "
            f"(images under {PAPER_STRIDE_MIN_WIDTH} pixels wide)"
        )

    def accuracy(self, theta: Any, X: np.ndarray, y: np.ndarray) -> float:
        """Share of ``X`` classified as ``y``."""
        return float(np.mean(np.asarray(self.predict(theta, X)) == y))


def make_cnn(image_shape: tuple[int, int], rng: np.random.Generator) -> FlModel:
    """The Table 4 CNN for ``image_shape`` images (module docstring), initialised from ``rng``."""
    stride = _stride(image_shape[1])
    flat, unravel = ravel_pytree(_init(image_shape, rng))

    def logits(theta: jnp.ndarray, X: jnp.ndarray) -> jnp.ndarray:
        params = unravel(theta)
        return _features(params, X[..., None], stride) @ params["dense_w"] + params["dense_b"]

    def loss(theta: jnp.ndarray, X: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
        return optax.softmax_cross_entropy_with_integer_labels(logits(theta, X), y).mean()

    def one_user(theta: jnp.ndarray, x: jnp.ndarray, label: jnp.ndarray) -> jnp.ndarray:
        return jax.grad(loss)(theta, x[None], label[None])

    return FlModel(
        image_shape=tuple(image_shape),
        stride=stride,
        initial=np.asarray(flat),
        loss=jax.jit(loss),
        per_user_gradients=jax.jit(jax.vmap(one_user, in_axes=(None, 0, 0))),
        mean_gradient=jax.jit(jax.grad(loss)),
        predict=jax.jit(lambda theta, X: jnp.argmax(logits(theta, X), axis=1)),
    )


def cnn_parameter_count(image_shape: tuple[int, int]) -> int:
    """d of the CNN for ``image_shape`` images (1,592 for 8x8, module docstring)."""
    return make_cnn(image_shape, np.random.default_rng(0)).dim


def adam(learning_rate: float, decay: float) -> optax.GradientTransformation:
    """Appendix E's optimizer: Adam whose learning rate decays by ``decay`` every round (optax schedule)."""
    return optax.adam(optax.exponential_decay(learning_rate, transition_steps=1, decay_rate=decay))
