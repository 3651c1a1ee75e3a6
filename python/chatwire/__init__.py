"""chatwire for Python: transformers' ``apply_chat_template`` and Hugging Face ``tokenizers``,
rendered and tokenized by chatwire's C++ library (byte-for-byte the same output, faster).

    import chatwire
    tok = chatwire.AutoTokenizer.from_pretrained("path/to/checkpoint")
    ids = tok.apply_chat_template(messages)                       # list[int]
    out = tok.apply_chat_template(messages, return_dict=True, return_assistant_tokens_mask=True)
    # out["input_ids"], out["attention_mask"], out["assistant_masks"]

    raw = chatwire.Tokenizer.from_file("tokenizer.json")          # tokenizers.Tokenizer
    raw.encode_batch(["a", "b"])                                  # GIL released, threads

    ep = chatwire.Endpoint("path/to/checkpoint")                  # OpenAI request <-> model
    prompt = ep.prepare(request)                                  # prompt.ids, prompt.stop_ids
    gen = ep.start(prompt)
    deltas = gen.push(generated_ids)                              # OpenAI deltas (dicts)
    gen.finish(); gen.message                                     # the assistant message

Only local checkpoint directories are read (nothing is downloaded).
"""

import json
import logging
import operator
import os

from . import errors
from ._chatwire import ChatModel as _ChatModel
from ._chatwire import DecodeStream, Encoding, Tokenizer, get_num_threads, set_num_threads
from ._chatwire import Endpoint, Generation, Prompt
from ._chatwire import adapt as _adapt
from ._chatwire import parse_response as _parse_response
from ._chatwire import probe as _probe
from ._chatwire import sentinel_request
from .errors import (CannotRepresent, Error, LimitError, RequestError, SecurityError,
                     TemplateAssertionError, TemplateError, TemplateRuntimeError,
                     TemplateSyntaxError, TokenizerError, UndefinedError)

__all__ = [
    "AutoTokenizer", "BatchEncoding", "Tokenizer", "Encoding", "DecodeStream", "probe", "adapt",
    "Endpoint", "Prompt", "Generation",
    "sentinel_request", "parse_response",
    "set_num_threads", "get_num_threads", "errors", "Error", "TemplateError",
    "TemplateSyntaxError", "TemplateAssertionError", "TemplateRuntimeError", "UndefinedError",
    "SecurityError", "RequestError", "CannotRepresent", "LimitError", "TokenizerError",
]

logger = logging.getLogger("chatwire")

SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                       "cls_token", "mask_token")


_IGNORED_FROM_PRETRAINED = {"use_fast", "trust_remote_code", "local_files_only", "revision",
                            "cache_dir", "force_download", "token", "subfolder"}


# Attributes from_pretrained sets from its arguments, as transformers does (pad_token="<pad>").
_SETTABLE_FROM_PRETRAINED = ("padding_side", "truncation_side", "model_max_length",
                             *SPECIAL_TOKEN_NAMES)


class BatchEncoding(dict):
    """transformers' BatchEncoding as far as a training pipeline uses it: a dict whose keys
    are also attributes (``out.input_ids``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# transformers' VERY_LARGE_INTEGER: model_max_length when the checkpoint gives none.
_VERY_LARGE_INTEGER = int(1e30)


def _check_unsupported(caller="apply_chat_template", **options):
    # transformers' padding/truncation/tensor options: refused rather than silently ignored
    # (values that change nothing, padding="do_not_pad" and truncation="do_not_truncate", pass).
    no_ops = {"padding": "do_not_pad", "truncation": "do_not_truncate"}
    for name, value in options.items():
        if value not in (None, False) and no_ops.get(name) != value:
            raise errors.make("NotImplementedError",
                              f"chatwire's {caller} does not implement {name}={value!r}"
                              " (returns unpadded Python lists)")


class AutoTokenizer:
    """A checkpoint directory's chat templates, special tokens and tokenizer.json, with the
    names and semantics of transformers' ``PreTrainedTokenizerFast``.

    Use ``AutoTokenizer.from_pretrained(model_dir)``. chatwire's own options (keyword-only):
    ``now`` (an ISO 8601 time for ``strftime_now``; default: the real local time, as
    transformers) and ``validate`` (check the request first and name the bad field,
    default True; False renders whatever transformers would render).
    """

    def __init__(self, model_dir, *, now=None, validate=True):
        self.name_or_path = os.fspath(model_dir)
        # Where it was loaded from, whatever the working directory of a process it is sent to.
        self._load_dir = os.path.abspath(self.name_or_path)
        self._now, self._validate = now, validate
        self._model = _ChatModel(self.name_or_path, now or "", validate)
        self._warned = set()
        tokens = self._model.special_tokens or {}
        for name in SPECIAL_TOKEN_NAMES:
            setattr(self, "_" + name, tokens.get(name))
        self._additional = list(tokens.get("additional_special_tokens") or [])
        self._overrides = {}  # special tokens assigned (tok.pad_token = ...): the template sees them
        self._template_override = None  # tok.chat_template = ...
        config = self._tokenizer_config()
        self.padding_side = config.get("padding_side", "right")
        self.truncation_side = config.get("truncation_side", "right")
        length = config.get("model_max_length")
        self.model_max_length = (int(length) if isinstance(length, (int, float))
                                 and length < _VERY_LARGE_INTEGER else _VERY_LARGE_INTEGER)

    def _tokenizer_config(self):
        path = os.path.join(self.name_or_path, "tokenizer_config.json")
        if not os.path.isfile(path):
            return {}
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        return config if isinstance(config, dict) else {}

    # Pickled as its directory and what was assigned since (datasets.map(num_proc=N), Ray, Dask,
    # spawn DataLoader workers send the tokenizer to other processes); the C++ state is reloaded.
    def __reduce__(self):
        state = {"overrides": dict(self._overrides), "template": self._template_override,
                 "padding_side": self.padding_side, "truncation_side": self.truncation_side,
                 "model_max_length": self.model_max_length}
        if hasattr(self, "_response_template"):
            state["response_template"] = self._response_template
        state["name_or_path"] = self.name_or_path
        return (_restore_auto_tokenizer, (self._load_dir, self._now, self._validate, state))

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *, now=None, validate=True, **kwargs):
        # Arguments that only matter for downloads or for choosing the Python class: accepted
        # so that existing calls keep working; they change nothing for a local directory.
        unknown = sorted(set(kwargs) - _IGNORED_FROM_PRETRAINED - set(_SETTABLE_FROM_PRETRAINED))
        if unknown:
            raise errors.make("TypeError", "from_pretrained() got unsupported arguments: "
                              + ", ".join(unknown))
        tok = cls(pretrained_model_name_or_path, now=now, validate=validate)
        for name in _SETTABLE_FROM_PRETRAINED:  # transformers sets these from its kwargs too
            if name in kwargs:
                setattr(tok, name, kwargs[name])
        return tok

    # ----- special tokens ---------------------------------------------------------------

    def _token_id(self, token):
        if token is None or not self._model.has_tokenizer:
            return None
        return self._model.tokenizer.token_to_id(token)

    @property
    def special_tokens_map(self):
        out = {n: getattr(self, "_" + n) for n in SPECIAL_TOKEN_NAMES
               if getattr(self, "_" + n) is not None}
        if self._additional:
            out["additional_special_tokens"] = list(self._additional)
        return out

    @property
    def additional_special_tokens(self):
        return list(self._additional)

    @property
    def chat_template(self):
        """The template source (str), a dict of name -> source for a directory with several
        templates, or None; assignable (a str), as in transformers: apply_chat_template then
        uses it unless given another."""
        if self._template_override is not None:
            return self._template_override
        if not self._model.has_template:
            return None
        names = self._model.template_names
        if names:
            return {name: self._model.template_source(name) for name in names}
        return self._model.template_source("")

    @chat_template.setter
    def chat_template(self, value):
        if value is not None and not isinstance(value, str):
            raise errors.make("TypeError", "chat_template must be a str (template source)")
        self._template_override = value

    @property
    def all_special_tokens(self):
        """The special tokens (those of special_tokens_map, then the additional ones), each once."""
        out = []
        for name in SPECIAL_TOKEN_NAMES:
            token = getattr(self, "_" + name)
            if token is not None and token not in out:
                out.append(token)
        for token in self._additional:
            if token not in out:
                out.append(token)
        return out

    @property
    def all_special_ids(self):
        return self.convert_tokens_to_ids(self.all_special_tokens)

    @property
    def is_fast(self):
        return True

    @property
    def tokenizer(self):
        """The underlying ``chatwire.Tokenizer`` (tokenizers' API)."""
        return self._model.tokenizer

    @property
    def vocab_size(self):
        """The model's vocabulary without the added tokens (transformers' ``vocab_size``)."""
        return self._model.tokenizer.get_vocab_size(with_added_tokens=False)

    def __len__(self):
        return self._model.tokenizer.get_vocab_size(with_added_tokens=True)

    def get_vocab(self):
        """token -> id for the vocabulary and the added tokens."""
        tok = self._model.tokenizer
        vocab, total, i = {}, len(self), 0
        while len(vocab) < total and i < 2 * total + 4096:  # ids may have gaps
            token = tok.id_to_token(i)
            if token is not None:
                vocab[token] = i
            i += 1
        return vocab

    def _token_to_id_or_unk(self, token):
        if token is None:
            return None
        found = self._model.tokenizer.token_to_id(token)
        return found if found is not None else self.unk_token_id

    def convert_tokens_to_ids(self, tokens):
        """An unknown token is the unk token's id (None when there is none), as transformers."""
        if tokens is None:
            return None
        if isinstance(tokens, str):
            return self._token_to_id_or_unk(tokens)
        return [self._token_to_id_or_unk(t) for t in tokens]

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        """The token of each id; skip_special_tokens leaves out ``all_special_ids`` (the
        special_tokens_map's tokens and the additional ones), as transformers does, not every
        added token marked special (Llama 3's header tokens stay)."""
        ids = _as_list(ids)
        tok = self._model.tokenizer
        if not isinstance(ids, (list, tuple)):
            return tok.id_to_token(operator.index(ids))
        skip = set(self.all_special_ids) if skip_special_tokens else ()
        return [tok.id_to_token(operator.index(i)) for i in ids if operator.index(i) not in skip]

    def tokenize(self, text, add_special_tokens=False):
        """The token strings of ``text`` (transformers' ``tokenize``: without special tokens
        unless asked)."""
        return list(self._model.tokenizer.encode(text, add_special_tokens=add_special_tokens).tokens)

    # ----- tokenizing ---------------------------------------------------------------------

    def encode(self, text, add_special_tokens=True):
        return self._model.tokenizer.encode_ids(text, add_special_tokens)

    def __call__(self, text, add_special_tokens=True, padding=False, truncation=None,
                 max_length=None, return_tensors=None, return_attention_mask=None,
                 return_token_type_ids=None, verbose=True):
        # As in transformers: max_length truncates unless truncation=False says not to (the
        # default None turns it on, which chatwire does not implement: refused below).
        if truncation in (False, "do_not_truncate") and padding != "max_length":
            max_length = None
        _check_unsupported("tokenizer call", padding=padding, truncation=truncation,
                           max_length=max_length, return_tensors=return_tensors,
                           return_token_type_ids=return_token_type_ids)
        tok = self._model.tokenizer
        with_mask = return_attention_mask is not False
        if isinstance(text, str):
            ids = tok.encode_ids(text, add_special_tokens)
            return (BatchEncoding(input_ids=ids, attention_mask=[1] * len(ids)) if with_mask
                    else BatchEncoding(input_ids=ids))
        ids = tok.encode_ids_batch(list(text), add_special_tokens)
        return (BatchEncoding(input_ids=ids, attention_mask=[[1] * len(i) for i in ids])
                if with_mask else BatchEncoding(input_ids=ids))

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        token_ids = _as_list(token_ids)  # numpy arrays and scalars, torch tensors
        if not isinstance(token_ids, (list, tuple)):
            token_ids = [operator.index(token_ids)]
        return self._model.tokenizer.decode(token_ids, skip_special_tokens,
                                            clean_up_tokenization_spaces)

    def batch_decode(self, sequences, skip_special_tokens=False,
                     clean_up_tokenization_spaces=None):
        sequences = _as_list(sequences)
        # A flat list of ids is a batch of one-token sequences, as transformers reads it.
        sequences = [_as_list(s) if isinstance(_as_list(s), (list, tuple))
                     else [operator.index(s)] for s in sequences]
        return self._model.tokenizer.decode_batch(sequences, skip_special_tokens,
                                                  clean_up_tokenization_spaces)

    # ----- chat templates -----------------------------------------------------------------

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None,
                            add_generation_prompt=False, continue_final_message=False,
                            tokenize=True, padding=False, truncation=False, max_length=None,
                            return_tensors=None, return_dict=False,
                            return_assistant_tokens_mask=False, tokenizer_kwargs=None,
                            **kwargs):
        """transformers' apply_chat_template (v4 semantics: ``tokenize=True`` returns a list
        of ids unless ``return_dict=True``). A list of conversations returns transformers'
        batched form: a list of str, a list of id lists, or one BatchEncoding of lists."""
        # transformers' own checks, in its order and with its messages.
        if return_dict and not tokenize:
            raise errors.make("ValueError",
                              "`return_dict=True` is incompatible with `tokenize=False`, because "
                              "there is no dict of tokenizer outputs to return.")
        if return_assistant_tokens_mask and not return_dict:
            raise errors.make("ValueError", "`return_assistant_tokens_mask=True` is incompatible "
                              "with `return_dict=False`")
        if isinstance(conversation, (list, tuple)) and conversation and (
                isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")):
            conversations, batched = list(conversation), True
        else:
            conversations, batched = [conversation], False
        # No-ops in transformers, so accepted: max_length without truncation or padding to it,
        # and padding one conversation to its own length.
        if not truncation and padding != "max_length":
            max_length = None
        if not batched and padding in (True, "longest"):
            padding = False
        _check_unsupported(padding=padding, truncation=truncation, max_length=max_length,
                           return_tensors=return_tensors, tokenizer_kwargs=tokenizer_kwargs or None)
        # An assigned template replaces the model's (named) ones, as in transformers: then every
        # chat_template string is template source, never a name.
        is_source = self._template_override is not None
        if chat_template is None:
            chat_template = self._template_override
        if self._overrides:  # assigned special tokens reach the template; kwargs still win
            kwargs = {**self._overrides, **kwargs}
        if continue_final_message:
            if add_generation_prompt:
                raise errors.make(
                    "ValueError",
                    "continue_final_message and add_generation_prompt are not compatible. Use "
                    "continue_final_message when you want the model to continue the final message,"
                    " and add_generation_prompt when you want to add a header that will prompt it "
                    "to start a new assistant message instead.")
            if return_assistant_tokens_mask:
                raise errors.make("ValueError", "continue_final_message is not compatible with "
                                  "return_assistant_tokens_mask.")
        if chat_template is not None and not isinstance(chat_template, str):
            raise errors.make("TypeError", "chat_template must be a str (a name or template "
                              f"source), got {type(chat_template).__name__}")
        if not tokenize:
            output = "text"
        elif not return_dict:
            output = "ids"
        else:
            output = "dict_mask" if return_assistant_tokens_mask else "dict"
        rows = self._model.render(conversations, tools, documents, chat_template,
                                  bool(add_generation_prompt), bool(continue_final_message),
                                  kwargs, output, False, batched=batched,
                                  chat_template_is_source=is_source)
        values = []
        for _ok, value, warnings in rows:
            for w in warnings:
                if w not in self._warned:  # transformers' logger.warning_once
                    self._warned.add(w)
                    logger.warning(w)
            values.append(value)
        if output in ("text", "ids"):
            return values if batched else values[0]
        ids = [v[0] if output == "dict_mask" else v for v in values]
        out = BatchEncoding(input_ids=ids, attention_mask=[[1] * len(i) for i in ids])
        if output == "dict_mask":
            out["assistant_masks"] = [v[1] for v in values]
        if not batched:
            out = BatchEncoding({k: v[0] for k, v in out.items()})
        return out

    # ----- response templates -------------------------------------------------------------

    @property
    def response_template(self):
        """transformers' response template of the checkpoint (``tokenizer_config.json``'s
        ``response_template``) as a dict, or None; assignable, as in transformers."""
        if not hasattr(self, "_response_template"):
            template = None
            path = os.path.join(self.name_or_path, "tokenizer_config.json")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    config = json.load(f)
                if isinstance(config, dict):
                    template = config.get("response_template")
            self._response_template = template
        return self._response_template

    @response_template.setter
    def response_template(self, value):
        self._response_template = value

    def parse_response(self, response, schema=None, *, prefix=None, tools=None):
        """transformers' ``tokenizer.parse_response``: model output (a str or token ids; a list
        of them is a batch and gives a list) read into a message dict with the response template
        (``schema`` when given, else ``self.response_template``). ``prefix`` is the prompt sent
        before generation (str or token ids; one per item or one for all), required as in
        transformers: pass ``""`` when the output holds the whole message."""
        template = schema if schema is not None else self.response_template
        if template is None:
            raise errors.make("AttributeError", "this tokenizer has no response_template; set "
                              "tokenizer.response_template or pass schema=")
        if not (isinstance(template, dict) and ("version" in template or "fields" in template)):
            raise errors.make("ValueError", "schema is not a response_template (no 'version' or "
                              "'fields'); the legacy response_schema is not supported")
        response, prefix = _as_list(response), _as_list(prefix)

        def text(x):
            return x if x is None or isinstance(x, str) else self.decode(list(x))

        if not isinstance(response, list) or _is_ids(response):
            return _parse_response(text(response), template, text(prefix), tools)
        if isinstance(prefix, list) and not _is_ids(prefix):
            if len(prefix) != len(response):
                raise errors.make("ValueError", f"{len(prefix)} prefixes for a batch of "
                                  f"{len(response)} responses")
            prefixes = [text(_as_list(p)) for p in prefix]
        else:
            prefixes = [text(prefix)] * len(response)
        return [_parse_response(text(_as_list(r)), template, p, tools)
                for r, p in zip(response, prefixes)]

    def __repr__(self):
        return f"chatwire.AutoTokenizer(name_or_path={self.name_or_path!r})"


def _special_property(name):
    def get(self):
        return getattr(self, "_" + name)

    def set_token(self, value):  # tok.pad_token = tok.eos_token, as SFT scripts do
        if value is not None and not isinstance(value, str):
            raise errors.make("TypeError", f"{name} must be a str or None")
        setattr(self, "_" + name, value)
        self._overrides[name] = value

    def get_id(self):
        return self._token_id(getattr(self, "_" + name))

    def set_id(self, value):
        token = None if value is None else self._model.tokenizer.id_to_token(operator.index(value))
        if value is not None and token is None:
            raise errors.make("ValueError", f"{name}_id {value} is not in the vocabulary")
        set_token(self, token)

    setattr(AutoTokenizer, name, property(get, set_token))
    setattr(AutoTokenizer, name + "_id", property(get_id, set_id))


for _n in SPECIAL_TOKEN_NAMES:
    _special_property(_n)
del _n


def _restore_auto_tokenizer(path, now, validate, state):
    tok = AutoTokenizer(path, now=now, validate=validate)
    for name, value in state["overrides"].items():
        setattr(tok, name, value)
    tok._template_override = state["template"]
    tok.padding_side = state["padding_side"]
    tok.truncation_side = state["truncation_side"]
    tok.model_max_length = state["model_max_length"]
    if "response_template" in state:
        tok._response_template = state["response_template"]
    tok.name_or_path = state.get("name_or_path", path)  # as given, as transformers keeps it
    return tok


def _as_list(x):
    """numpy arrays and torch tensors as (nested) lists; anything else unchanged."""
    return x.tolist() if hasattr(x, "tolist") and not isinstance(x, (str, list)) else x


def _is_ids(x):
    return isinstance(x, (list, tuple)) and all(isinstance(i, int) for i in x)


def parse_response(text, response_template, *, prefix=None, tools=None):
    """transformers.utils.chat_parsing.parse_response: ``text`` read into a message dict with
    ``response_template`` (a dict). ``prefix`` (the prompt) is required; ``""`` opts out."""
    return _parse_response(text, response_template, prefix, tools)


def probe(template_or_dir, *, max_steps=None):
    """The probe's profile of a template (a .jinja file, a checkpoint directory, or template
    source) as a dict, the keys ``chatwire probe --json`` prints. ``max_steps``: the step limit
    of each render the probe makes (default 1,000,000, as ``chatwire probe --max-steps``)."""
    return _probe(os.fspath(template_or_dir), max_steps=max_steps)


def adapt(request, template_or_dir, call_syntax=None, verify=True, special_tokens=None):
    """An OpenAI chat-completions request adapted to one template (a .jinja file or a
    checkpoint directory): ``{"context", "adaptations", "warnings", "rendered"}``.
    Raises CannotRepresent when the template would still lose part of the request.
    ``special_tokens``: for a .jinja file, the variables its model's tokenizer gives
    (``{"bos_token": ..., "eos_token": ...}``); none by default (a directory has its own)."""
    return _adapt(request, os.fspath(template_or_dir), call_syntax or "", bool(verify),
                  special_tokens)
