package main

import (
	"github.com/urfave/cli/v2"
)

func newApp() *cli.App {
	return &cli.App{
		Name:    "folio",
		Usage:   "a versioned content repository for block-structured documents",
		Version: version,
	}
}

func exitCode(err error) int { return 1 }
