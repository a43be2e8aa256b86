"""codeqa: answer questions about a codebase with precise references and verified citations."""

__version__ = "0.1.0"
