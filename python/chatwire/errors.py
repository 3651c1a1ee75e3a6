"""The exceptions chatwire raises, named as transformers' call would raise them.

Every chatwire error is a ``chatwire.Error`` carrying ``type`` (the Python exception name the
reference would raise), ``message``, ``lineno``/``column`` (the template position, or None) and
``path`` (the request field, e.g. ``messages[2].content``, or None). On top of that:

- jinja2's template errors keep jinja2's names and hierarchy under ``chatwire.TemplateError``:
  ``TemplateSyntaxError`` (and ``TemplateAssertionError``), ``TemplateRuntimeError``,
  ``UndefinedError``, ``SecurityError``. ``raise_exception(...)`` in a template raises
  ``TemplateError`` itself, as transformers' environment does. Where jinja2 is installed (it is
  wherever transformers is), each is also a subclass of jinja2's class of the same name, so
  ``except jinja2.exceptions.TemplateError`` catches chatwire's as it catches transformers'.
- Python's own exceptions raised inside a template or by transformers' checks (``TypeError``,
  ``ValueError``, ``KeyError``, ``OverflowError``, ...) are subclasses of those builtins, so
  ``except TypeError`` catches them as it would with transformers.
- chatwire's own: ``RequestError`` (a request refused before rendering, naming the field) and
  ``CannotRepresent`` (the adapter) are ValueErrors; ``LimitError`` (an engine limit) is a
  RuntimeError; ``TokenizerError`` (a malformed tokenizer.json) is a ValueError.
"""

import builtins

try:  # optional: jinja2's classes as bases, where a transformers user has them
    from jinja2 import exceptions as _jinja2
except ImportError:  # pragma: no cover - chatwire itself does not need jinja2
    _jinja2 = None


def _jinja2_base(name):
    return (getattr(_jinja2, name),) if _jinja2 is not None else ()


class Error(Exception):
    """Base of every exception chatwire raises (a mixin next to the builtin it stands for)."""

    def __init__(self, message="", *, type=None, lineno=None, column=None, path=None):
        self.type = type or self.__class__.__name__
        self._message = message
        self.lineno = lineno or None
        self.column = column or None
        self.path = path or None
        # Exception's own constructor: jinja2's TemplateSyntaxError, a base where jinja2 is
        # installed, wants a line number as its second argument.
        Exception.__init__(self, self._text())

    @property
    def message(self):  # a property too in jinja2's TemplateError (read-only there)
        return self._message

    def _text(self):
        text = self.message
        if self.path:
            text = f"{self.path}: {text}"
        if self.lineno:
            text += f" (line {self.lineno}"
            if self.column:
                text += f", column {self.column}"
            text += ")"
        return text

    def __str__(self):
        return self._text()

    def __reduce__(self):
        # Picklable (Dask sends exceptions between processes).
        return (_rebuild, (self.__class__.__name__, self.message, self.lineno, self.column,
                           self.path, self.type))


# jinja2.exceptions, same names and hierarchy (and jinja2's classes as bases where installed).
class TemplateError(Error, *_jinja2_base("TemplateError")):
    pass


class TemplateSyntaxError(TemplateError, *_jinja2_base("TemplateSyntaxError")):
    # jinja2's attributes; chatwire renders no template files.
    name = None
    filename = None
    source = None
    translated = False


class TemplateAssertionError(TemplateSyntaxError, *_jinja2_base("TemplateAssertionError")):
    pass


class TemplateRuntimeError(TemplateError, *_jinja2_base("TemplateRuntimeError")):
    pass


class UndefinedError(TemplateRuntimeError, *_jinja2_base("UndefinedError")):
    pass


class SecurityError(TemplateRuntimeError, *_jinja2_base("SecurityError")):
    pass


# chatwire's own.
class RequestError(Error, builtins.ValueError):
    pass


class CannotRepresent(Error, builtins.ValueError):
    pass


class TokenizerError(Error, builtins.ValueError):
    pass


class LimitError(Error, builtins.RuntimeError):
    pass


_CLASSES = {
    c.__name__: c
    for c in (TemplateError, TemplateSyntaxError, TemplateAssertionError, TemplateRuntimeError,
              UndefinedError, SecurityError, RequestError, CannotRepresent, TokenizerError,
              LimitError)
}

# Builtin exception names the library reports, each as a chatwire subclass of the builtin.
# UnicodeDecodeError's and json.JSONDecodeError's constructors take several arguments, so
# they are represented by their base, ValueError.
_BUILTIN_BASES = {"UnicodeDecodeError": "ValueError", "JSONDecodeError": "ValueError"}
for _name in ("TypeError", "ValueError", "KeyError", "IndexError", "AttributeError",
              "OverflowError", "ZeroDivisionError", "RecursionError", "MemoryError",
              "SyntaxError", "FileNotFoundError", "IsADirectoryError", "PermissionError",
              "UnicodeDecodeError", "JSONDecodeError", "RuntimeError", "NotImplementedError"):
    _base = getattr(builtins, _BUILTIN_BASES.get(_name, _name))
    _CLASSES[_name] = type(_name, (Error, _base), {"__module__": __name__,
                                                    "__qualname__": _name})
del _name, _base

# Module attributes for the builtin-named classes: chatwire.errors.TypeError etc.
globals().update({k: v for k, v in _CLASSES.items() if k not in globals()})


def make(type, message, lineno=0, column=0, path=""):
    """The exception for a chatwire error of the given type name (used by the C++ module)."""
    cls = _CLASSES.get(type)
    if cls is None:
        # A type name this table does not know: still a chatwire.Error, with the name kept.
        cls = _CLASSES.setdefault(type, builtins.type(type, (Error,), {"__module__": __name__}))
    return cls(message, type=type, lineno=lineno, column=column, path=path)


def _rebuild(name, message, lineno, column, path, type):
    return make(type if name not in _CLASSES else name, message, lineno or 0, column or 0,
                path or "")
