package main

import (
	"context"
	"flag"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/serve"
)

// serveCommand is `cloudstack-cpi serve -configPath cpi.json`: the
// registry and/or the WebDAV daemon until SIGTERM or SIGINT.
func serveCommand(args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("cloudstack-cpi serve", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configPath := flags.String("configPath", "", "path to cpi.json")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	logger := log.New(stderr, "[serve] ", log.LstdFlags|log.LUTC|log.Lmsgprefix)
	if *configPath == "" || flags.NArg() > 0 {
		logger.Print("usage: cloudstack-cpi serve -configPath cpi.json")
		return 2
	}
	cfg, err := config.LoadServe(*configPath)
	if err != nil {
		logger.Printf("invalid config: %s", jsonwords.Message(err))
		return 1
	}
	servers, err := serve.Start(cfg, logger.Printf)
	if err != nil {
		logger.Printf("cannot start: %s", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := servers.Serve(ctx, serve.ShutdownGrace); err != nil {
		logger.Printf("stopped with an error: %s", err)
		return 1
	}
	logger.Print("stopped")
	return 0
}
