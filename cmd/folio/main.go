package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "folio:", err)
		os.Exit(exitCode(err))
	}
}
