package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The PostgreSQL engine ([storage] engine = "postgres").
	_ "github.com/foliodev/folio/internal/kv/pgkv"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
