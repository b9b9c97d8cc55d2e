"""What a change does to its users: the public names, parameters, defaults, options and switches a
commit adds, removes or changes (DESIGN.md §3c), read from each touched file's syntax trees before and
after (`python` for Python, `other_langs` for C/C++ headers, Rust, Go, JS/TS through tree-sitter) and
from the packaging metadata (`packaging`: what a distribution ships, which Pythons it supports).
`changes` holds the facts' shape; `commit` runs the parsers over one commit and pairs renames."""
