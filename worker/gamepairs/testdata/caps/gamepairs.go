//go:build gamepairs

package main

import _ "github.com/arbiter-chess/arbiter/worker/gamepairs"
