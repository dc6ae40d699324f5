"""The shapes of data/models.json and of a result file, declared once as pydantic models:
validated with them (`models_file.check_entry`, `results.read_result`) and written out as JSON
Schemas (`SCHEMAS`, site/schema/ by `build --write`), so an editor checks the same rules.

Only validation: callers keep the plain dicts (keys in the file's order, values as written);
a model says what a valid file is. Each value's type says what it must be (`_must`), and that
is also its description in the JSON Schema; rules no type can state are validators here
(`Price`'s two bases, an interval's low <= high, a real date) or stay with their caller (a
result file filed under its eval, the publish rules in publish.py, names unique in models.json).

`problem` turns a ValidationError into the one line the harness prints: the first error's
field path, what the value must be, the value found, and how many more errors there are.

Imported at first use, by models_file and results: a run that reads an empty models.json and no
result file never loads pydantic."""

from __future__ import annotations

import datetime as dt
import json
import math
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    WrapValidator,
    create_model,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticCustomError

from evals.tasks import kilowatt_hour_keys, on_board_keys, tasks

MAX_EXACT = 2**53  # integers are exact in JavaScript (the site) below this
SHOWN = 60  # characters of a value a message shows


def _must(should: str) -> Any:
    """The last of a value's checks, `Annotated[base, *checks, _must(should)]`: any failure of
    the checks before it is one error, "must be {should}", which is also the value's
    description (in the JSON Schema, and the field's). One FieldInfo carries both, so each
    annotation is a type a type checker reads."""

    def must(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("invalid", "must be {should}", {"should": should}) from None

    described = Field(description=should)
    described.metadata.append(
        WrapValidator(must)
    )  # pydantic applies it where it applies the description
    return described


def _real_date(value: str) -> str:
    dt.date.fromisoformat(value)  # the pattern alone takes 2026-13-01
    return value


def _web_url(value: str) -> str:
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError("whitespace or an unprintable character")
    parts = urlsplit(value)  # a malformed [IPv6] host is a ValueError
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL with a host")
    return value


def _file_name(value: str) -> str:
    if value in ("", ".", "..") or Path(value).name != value or not value.isprintable():
        raise ValueError("not a plain file name")
    return value


Text = Annotated[str, Strict(), Field(pattern=r"\S"), _must("a non-empty string")]
String = Annotated[str, Strict(), _must("a string")]
Flag = Annotated[bool, Strict(), _must("true or false")]
Count = Annotated[int, Strict(), Field(ge=0, lt=MAX_EXACT), _must("a count from 0 to 2**53 - 1")]
Epoch = Annotated[int, Strict(), Field(ge=1, lt=MAX_EXACT), _must("a count from 1 to 2**53 - 1")]
Fraction = Annotated[
    float, Strict(), Field(ge=0, le=1, allow_inf_nan=False), _must("a fraction from 0 to 1")
]
Finite = Annotated[
    float, Strict(), Field(ge=0, allow_inf_nan=False)
]  # an amount, `Annotated[Finite, _in(unit)]`
Amount = Annotated[Finite, _must("a finite number >= 0")]
OptionalString = Annotated[Annotated[str, Strict()] | None, _must("a string or null")]


def _in(unit: str) -> Any:
    return _must(f"a finite number >= 0, in {unit}")


def _absent(**info: Any) -> Any:
    """The default of a field whose key a file may leave out, though not set to null: pydantic
    checks values given, never a default. (Typed Any: the field's type is a value's, given.)"""
    return Field(None, **info)


CLOSED = ConfigDict(extra="forbid")  # a key of no field is an error (a typo), not ignored


# ---- data/models.json ------------------------------------------------------------------------

PRICES = ({"input", "output"}, {"electricity"})


class Price(BaseModel):
    """{"input", "output"} in USD per million tokens or {"electricity"} in USD per kWh"""

    model_config = ConfigDict(
        **CLOSED,
        json_schema_extra={
            "oneOf": [
                {"required": ["input", "output"], "not": {"required": ["electricity"]}},
                {"required": ["electricity"], "maxProperties": 1},
            ]
        },
    )

    input: Annotated[Finite, _in("USD per million input tokens")] = _absent()
    output: Annotated[Finite, _in("USD per million output tokens")] = _absent()
    electricity: Annotated[Finite, _in("USD per kWh")] = _absent()

    @model_validator(mode="before")
    @classmethod
    def _one_basis(cls, value: Any) -> Any:
        if not isinstance(value, dict) or set(value) not in PRICES:
            raise PydanticCustomError("invalid", "must be {should}", {"should": cls.__doc__})
        return value


# The evals on the board: a models.json entry has a result file and kWh figures of each.
# Their fields are the registered evals' keys: models made at import, which a type checker
# takes as plain BaseModels (hence the ignores where they are used).
_kwh: dict[str, Any] = {
    key: (Annotated[Finite, _in("kWh")], _absent()) for key in kilowatt_hour_keys()
}
KilowattHour = create_model(
    "KilowattHour",
    __doc__=f"a map of some of {', '.join(kilowatt_hour_keys())} to kWh",
    __config__=CLOSED,
    **_kwh,
)
_files: dict[str, Any] = {
    key: (
        Annotated[
            str, Strict(), AfterValidator(_file_name), _must(f"a file name in results/{folder}/")
        ],
        ...,
    )
    for key, folder in on_board_keys().items()
}


class _OthersKept(BaseModel):
    """resultFiles may also name the result of an eval that is not on the board (its package
    uninstalled): kept as written, checked as a file name, and left out of everything else
    (`models_file.others`) until a package puts it on the board again."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[
        str,
        Annotated[
            str, Strict(), AfterValidator(_file_name), _must("a file name in results/<its eval>/")
        ],
    ] = Field(init=False)


ResultFiles = create_model(
    "ResultFiles",
    __doc__=f"a map of all of {', '.join(on_board_keys())} to file names",
    __base__=_OthersKept,
    **_files,
)


def _is_kwh(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


class Entry(BaseModel):
    """a model entry: an object with name, provider, url, releaseDate, size, price, ..."""

    name: Text
    provider: Text
    url: Annotated[
        str,
        Strict(),
        AfterValidator(_web_url),
        Field(json_schema_extra={"format": "uri"}),
        _must("an http(s) URL with a host"),
    ]
    releaseDate: Annotated[
        str,
        Strict(),
        Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
        AfterValidator(_real_date),
        _must("a real date written YYYY-MM-DD"),
    ]
    size: Annotated[
        Annotated[int, Strict(), Field(gt=0, lt=MAX_EXACT)] | None,
        _must("a byte count from 1 to 2**53 - 1, or null"),
    ] = None
    price: Price
    kilowattHour: KilowattHour | None = None  # type: ignore[valid-type]  # made at import (above)
    resultFiles: ResultFiles | None = None  # type: ignore[valid-type]  # made at import (above)
    allowErrors: Flag = False

    @model_validator(mode="before")
    @classmethod
    def _others_kwh(cls, value: Any) -> Any:
        """An entry that names the result of an eval not on the board (`_OthersKept`) may hold
        that eval's kilowattHour figures too: a key of no eval on the board is then taken when
        its value is a kWh figure (an entry of the board's evals only has none: a typo)."""
        files, kwh = (
            (value.get("resultFiles"), value.get("kilowattHour"))
            if isinstance(value, dict)
            else (None, None)
        )
        if isinstance(files, dict) and isinstance(kwh, dict) and set(files) - set(on_board_keys()):
            known = set(kilowatt_hour_keys())
            return {
                **value,
                "kilowattHour": {
                    key: v for key, v in kwh.items() if key in known or not _is_kwh(v)
                },
            }
        return value


# ---- result files ----------------------------------------------------------------------------

# Every registered eval writes result files, on the board or off it; an eval with bands
# (`Task.bands`) has its own model of them, `BandedResult` (one per such eval).
EVALS = ", ".join(tasks())
UNBANDED = tuple(name for name, task in tasks().items() if not task.bands)
BANDED = [task for task in tasks().values() if task.bands]
BANDS = tuple(
    dict.fromkeys(band for task in BANDED for band in task.bands)
)  # every eval's, for `Energy`


class Config(BaseModel):
    """the run's config: an object with eval, provider and model, and effort, route, split and
    limit when set (the identity's other fields are not checked here)"""

    eval: Annotated[Literal[UNBANDED], _must(f"one of {EVALS}")]  # type: ignore[valid-type]  # the registered evals, known at import
    provider: String
    model: String
    effort: OptionalString = None
    route: OptionalString = None
    split: OptionalString = None
    limit: Annotated[
        Annotated[int, Strict(), Field(gt=0, lt=MAX_EXACT)] | None,
        _must("a count from 1 to 2**53 - 1, or null"),
    ] = None


class Tokens(BaseModel):
    """an object of token counts: input and output, and reasoning and cached"""

    input: Count
    output: Count
    reasoning: Count = 0
    cached: Count = 0


class Batch(BaseModel):
    __doc__ = (  # one line: it is the schema's description
        "an object with calls, tokens and priceFactor (the share of the listed price they cost): "
        "the Batch API's part of the run"
    )

    calls: Count
    tokens: Tokens
    priceFactor: Fraction


def _ordered(interval: list[float]) -> list[float]:
    if interval[0] > interval[1]:
        raise ValueError("low > high")
    return interval


class Summary(BaseModel):
    """a summary: an object with n, correct, accuracy, ci95, apiErrors and tokens, and the
    other counts when there"""

    n: Count
    correct: Count
    accuracy: Fraction
    ci95: Annotated[
        list[Fraction],
        Field(min_length=2, max_length=2),
        AfterValidator(_ordered),
        _must("a [low, high] pair of fractions, low <= high"),
    ]
    epochs: Epoch = 1
    questions: Count = _absent()
    apiErrors: Count = 0
    unparseable: Count = 0
    judgeUnparseable: Count = 0
    datasetErrors: Count = 0
    passAt: Annotated[
        dict[Annotated[str, Field(pattern=r"^[1-9][0-9]*$")], Fraction],
        _must("an object of fractions by k (1, 2, ...)"),
    ] = _absent()
    tokens: Tokens
    judgeTokens: Tokens = _absent()
    batch: Batch = _absent()
    cost: Annotated[Finite, _in("USD")] = _absent()


class Row(BaseModel):
    """a row: an object with a string id and status, a true/false correct and an epoch from 1 when there"""

    id: String
    status: String
    correct: Flag
    epoch: Epoch = _absent()


class Prices(BaseModel):
    """an object with input and output, in USD per million tokens: the prices of the cost"""

    model_config = CLOSED

    input: Amount
    output: Amount


class Timing(BaseModel):
    """an object with wallSeconds and finishedAt when there: how long the run took (verify does not compare it)"""

    wallSeconds: Annotated[Finite, _in("seconds")] = _absent()
    finishedAt: String = _absent()


class Energy(BaseModel):
    __doc__ = (
        """an object with kWh, source and method, and bands """
        f"""({", ".join(t.name for t in BANDED)}): the energy the run's requests used"""
    )

    kWh: Annotated[Finite, _in("kWh")]
    bands: Annotated[
        dict[Literal[BANDS], Amount],  # type: ignore[valid-type]  # the registered bands
        _must(f"an object of kWh by band ({', '.join(BANDS)})"),
    ] = _absent()
    source: String
    method: String


class Result(BaseModel):
    """a result file: a JSON object with config, summary and results"""

    config: Config
    summary: Summary
    prices: Prices | None = None
    publishable: Flag = _absent()
    notPublishable: list[String] = _absent(description="a list of strings, the reasons")
    timing: Timing = _absent()
    energy: Energy = _absent()
    results: list[Row] = Field(description="a list of rows, one per answer")


def _banded_result(task: Any, prefix: str) -> type[Result]:
    """The result file of an eval with bands: its summary has `overall` and one per band, its
    rows their band (in `task.band_field`). Named `BandedResult` (`BandedRow`...) when it is
    the only such eval, else by the eval (`<Name>BandedResult`)."""
    name, field = task.name, task.band_field
    # Fields of the eval's name and bands, known at import: typed Any, as a type checker cannot read them.
    evals: dict[str, Any] = {"eval": (Annotated[Literal[name], _must(f"one of {EVALS}")], ...)}
    config = create_model(f"{prefix}Config", __base__=Config, **evals)
    parts: dict[str, Any] = {part: (Summary, ...) for part in ("overall", *task.bands)}
    summary = create_model(
        f"{prefix}Summary",
        __doc__=f"a {name} summary: an object with overall, {', '.join(task.bands)}, each a summary",
        **parts,
    )
    bands: dict[str, Any] = {
        field: (Annotated[Literal[task.bands], _must(f"one of {', '.join(task.bands)}")], ...)
    }
    row = create_model(
        f"{prefix}Row",
        __base__=Row,
        __doc__=(
            f"a {name} row: an object with a string id and status, a true/false correct, its "
            f"{field}, and an epoch from 1 when there"
        ),
        **bands,
    )
    rows: dict[str, Any] = {
        "results": (
            list[row],  # type: ignore[valid-type]  # made just above
            Field(description=f"a list of {name} rows, one per answer"),
        )
    }
    return create_model(
        f"{prefix}Result",
        __base__=Result,
        __doc__=(
            f"a {name} result file: a result file whose summary has overall and one per {field},\n"
            f"    and whose rows have their {field}"
        ),
        config=(config, ...),
        summary=(summary, ...),
        **rows,
    )


BANDED_RESULTS = {
    task.name: _banded_result(
        task, "Banded" if len(BANDED) == 1 else f"{task.name.title().replace('_', '')}Banded"
    )
    for task in BANDED
}


def result_model(result: Any) -> type[Result]:
    """The model a result file is checked with: by its config's eval (an eval with bands has its own)."""
    config = result.get("config") if isinstance(result, dict) else None
    eval = config.get("eval") if isinstance(config, dict) else None
    return BANDED_RESULTS.get(eval, Result) if isinstance(eval, str) else Result


# ---- one line per ValidationError ------------------------------------------------------------


def problem(model: type[BaseModel], data: Any) -> str | None:
    """None when `data` is valid by `model`, else one line: `price.input: must be a finite
    number >= 0 (got "1.5")`: the first error's field path (none for the whole value), what
    the value must be and what it is; a key no field has is its object's error; ", and N more"
    when there are more errors."""
    try:
        model.model_validate(data)
    except ValidationError as error:
        errors = error.errors(include_url=False)
    else:
        return None
    first = errors[0]
    loc, value = first["loc"], first.get("input")
    if first["type"] == "extra_forbidden":
        loc = loc[:-1]
        value = _at(data, loc)
    should = _description(model, loc)
    if first["type"] == "missing":
        reason = "missing" + (f" (must be {should})" if should else "")
    else:
        if first["type"] == "invalid":  # a `_must`'s, or a validator's: "must be ..."
            reason = first["msg"]
        else:
            reason = f"must be {should}" if should else first["msg"][:1].lower() + first["msg"][1:]
        reason += f" (got {_shown(value)})"
    more = f", and {len(errors) - 1} more" if len(errors) > 1 else ""
    return f"{_path(loc)}: {reason}{more}" if loc else f"{reason}{more}"


def _path(loc: tuple[str | int, ...]) -> str:
    """("results", 3, "id") -> "results[3].id"."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _at(data: Any, loc: tuple[str | int, ...]) -> Any:
    for part in loc:
        data = data[part]
    return data


def _description(tp: Any, loc: tuple[str | int, ...]) -> str | None:
    """What the value at `loc` of a `tp` must be: its `_must`'s description, else its model's
    docstring; None where the path leaves the declared fields."""
    description = None
    for part in loc:
        tp = _inner(tp)
        if (
            isinstance(tp, type)
            and issubclass(tp, BaseModel)
            and isinstance(part, str)
            and part in tp.model_fields
        ):
            field = tp.model_fields[part]
            tp, description = field.annotation, field.description
        elif get_origin(tp) in (list, dict):
            tp = get_args(tp)[-1]
            description = _annotated_description(tp)
        else:
            return None
    tp = _inner(tp)
    if description is None and isinstance(tp, type) and issubclass(tp, BaseModel) and tp.__doc__:
        description = " ".join(tp.__doc__.split())
    return description


def _inner(tp: Any) -> Any:
    """Optional[Annotated[X, ...]] -> X."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif get_origin(tp) in (Union, types.UnionType):
            tp = next(arg for arg in get_args(tp) if arg is not type(None))
        else:
            return tp


def _annotated_description(tp: Any) -> str | None:
    if get_origin(tp) is Annotated:
        return next(
            (m.description for m in get_args(tp)[1:] if getattr(m, "description", None)), None
        )
    return None


def _shown(value: Any) -> str:
    """A value as JSON for a one-line message, cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:  # an int of more than 4300 digits
        text = "a number too long to print"
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


# ---- JSON Schemas ----------------------------------------------------------------------------


class _JsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without a title per field (the field's name is its key) and
    without `"default": null` for keys that are simply absent."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> Any:
        generated = super().default_schema(schema)
        if generated.get("default", 0) is None:
            del generated["default"]
        return generated


def _schema(tp: Any, title: str, description: str) -> dict[str, Any]:
    generated = TypeAdapter(tp).json_schema(schema_generator=_JsonSchema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
        **generated,
    }


def models_schema() -> dict[str, Any]:
    return _schema(
        list[Entry],
        "data/models.json",
        "The leaderboard's models: an array of entries, names unique.",
    )


def result_schema() -> dict[str, Any]:
    return _schema(
        Union[Result, *BANDED_RESULTS.values()],
        "result file",
        "A run's result file, data/results/<eval>/<run>.json: the fields the harness reads.",
    )


# site/schema/<name> -> its schema
SCHEMAS = {"models.schema.json": models_schema, "result.schema.json": result_schema}


def schema_text(name: str) -> str:
    """The file's text: deterministic (pydantic's key order, two-space indent, a trailing newline)."""
    return json.dumps(SCHEMAS[name](), indent=2, ensure_ascii=False) + "\n"
