"""Judgment from history (DESIGN.md §3b): which later commit reverted or fixed forward which earlier one
(`followups`, `reverts`), whether a commit came from an automated account (`automation`), and what
the branch's own past says about the paths a commit touches, seen only from before a day's window
(`index`, counting the files and folders `keys` names; `sliding` moves it day by day for eval). Pure: the sources read the history, the store keeps it; this package only reasons."""
