// Package cmdutil is what every a2aflow command shares, whichever program
// part it belongs to (the server processes, the A2A client, the operator
// tools):
//
//   - flags bound to their environment variable, each variable named once
//     (Bind): the flag's usage names it, the flag records it, and the config
//     file, config print and the reference (docs/config.md) read it there;
//     renamed flags and variables keep working for one release, with a
//     warning (Formerly, WarnDeprecatedEnv);
//   - where a2aflow keeps its own records (--data-dir, --database) and where
//     the local server listens (LocalServerURL);
//   - exit codes (ExitError) and the program's name (ProgName).
package cmdutil
