"""The `digestbot` command line (click): every verb, its options and one-line errors (exit code 2) in
`main`; where a verb's output goes, never over a user's file or the store's own, in `output`. A verb
only parses, asks the composition root for what it needs, and prints."""
