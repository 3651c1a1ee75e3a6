"""Batch tokenization of chat rows for training pipelines.

``tokenize_batch(batch, model_dir)`` takes a batch of rows as the engines pass them (a dict of
columns from ``datasets.map(batched=True)``, Ray Data ``map_batches``, or a pandas DataFrame
from Spark ``mapInPandas`` / Dask ``map_partitions``) and returns, per row, ``input_ids``,
``attention_mask`` and ``assistant_masks`` (and ``labels`` when asked: the ids where the mask is
1, -100 elsewhere), which is what TRL's SFTTrainer uses instead of tokenizing itself.

Bad rows never stop the batch (the CLI batch's rule): a row that does not render or tokenize
gets empty lists and its error, ``"Type: message"`` with the template line or field path, in
the ``error_column`` (None for good rows). With ``labels=True`` a row whose assistant mask is all
zeros (the template has no ``{% generation %}`` blocks, or drops the row's assistant turns) has
nothing to train on and is such an error too, as TRL's ``assistant_only_loss`` refuses it. The
render's warnings (a template without generation blocks) are issued once per batch through
Python's ``warnings``.
"""

import warnings

from . import AutoTokenizer

_MODELS = {}  # model_dir -> AutoTokenizer, loaded once per process (worker)


def load(model_dir, now=None, validate=True):
    key = (str(model_dir), now, validate)
    tok = _MODELS.get(key)
    if tok is None:
        tok = _MODELS[key] = AutoTokenizer.from_pretrained(str(model_dir), now=now,
                                                           validate=validate)
    return tok


def _column(batch, key):
    col = batch[key]
    if hasattr(col, "tolist"):  # pandas Series, numpy arrays (Ray's default batch format)
        col = col.tolist()
    return list(col)


def tokenize_batch(batch, model_dir, messages_key="messages", *, tools_key=None,
                   documents_key=None, chat_template=None, mode="training", labels=False,
                   error_column="chatwire_error", template_kwargs=None, now=None, validate=True):
    """Tokenizes every row's conversation (``batch[messages_key]``) with ``model_dir``'s
    template and tokenizer, as ``apply_chat_template(tokenize=True, return_dict=True,
    return_assistant_tokens_mask=True)`` would, row by row.

    ``mode``: "training" (whole conversations, the default), "reply"
    (add_generation_prompt=True; masks as transformers computes them) or "prefill"
    (continue_final_message=True; no assistant masks, as transformers refuses masks there:
    the column is all zeros). ``tools_key``/``documents_key`` name per-row columns of tools and
    documents. ``template_kwargs`` are extra template variables for every row.

    Returns a dict of columns, or a DataFrame of them when ``batch`` is a DataFrame.
    """
    tok = load(model_dir, now, validate)
    if mode not in ("training", "reply", "prefill"):
        raise ValueError(f"mode must be 'training', 'reply' or 'prefill', got {mode!r}")
    if labels and mode == "prefill":
        # Every label would be -100 (nothing to train on: a NaN or zero loss, not an error row
        # per row): prefill gives no assistant masks, as transformers refuses them there.
        raise ValueError("labels=True needs assistant masks, which mode='prefill' does not give "
                         "(transformers refuses return_assistant_tokens_mask with "
                         "continue_final_message)")
    conversations = _column(batch, messages_key)
    n = len(conversations)
    tools = _column(batch, tools_key) if tools_key else [None] * n
    documents = _column(batch, documents_key) if documents_key else [None] * n
    output = "dict" if mode == "prefill" else "dict_mask"
    kwargs = dict(template_kwargs or {})

    if tools_key or documents_key:
        results = tok._model.render(conversations, tools, documents, chat_template,
                                    mode == "reply", mode == "prefill", kwargs, output, True, True)
    else:
        results = tok._model.render(conversations, None, None, chat_template, mode == "reply",
                                    mode == "prefill", kwargs, output, True)

    input_ids, attention_mask, assistant_masks, label_col, errors_col = [], [], [], [], []
    seen_warnings = {}

    def error_row(message):
        input_ids.append([])
        attention_mask.append([])
        assistant_masks.append([])
        label_col.append([])
        errors_col.append(message)

    for ok, value, info in results:
        if not ok:
            error_row(value)
            continue
        for warning in info or ():
            seen_warnings.setdefault(warning, None)
        if output == "dict_mask":
            ids, mask = value
        else:
            ids, mask = value, [0] * len(value)
        # (Prefill masks are all zeros by design: transformers gives none.)
        if labels and not any(mask):
            why = next((w for w in info or () if "generation" in w),
                       "the template leaves the row's assistant turns out of the masks")
            error_row(f"ValueError: no assistant tokens to train on ({why})")
            continue
        input_ids.append(ids)
        attention_mask.append([1] * len(ids))
        assistant_masks.append(mask)
        if labels:
            label_col.append([t if m else -100 for t, m in zip(ids, mask)])
        errors_col.append(None)
    for warning in seen_warnings:
        warnings.warn(f"chatwire: {model_dir}: {warning}", stacklevel=2)
    columns = {"input_ids": input_ids, "attention_mask": attention_mask,
               "assistant_masks": assistant_masks}
    if labels:
        columns["labels"] = label_col
    columns[error_column] = errors_col
    if hasattr(batch, "columns") and hasattr(batch, "iloc"):  # a pandas DataFrame
        return type(batch)(columns, index=batch.index)
    return columns
