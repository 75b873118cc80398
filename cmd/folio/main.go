package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := newApp()
	err := app.RunContext(ctx, interspersed(app, os.Args))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "folio:", termText(err.Error()))
		os.Exit(exitCode(err))
	}
}
