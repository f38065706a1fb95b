// The cert-manager controller for the test control plane, built from the published module
// github.com/cert-manager/cert-manager (its own cmd/controller is a separate, unpublished module).
// It wires the same pieces upstream's controller binary wires: one controller context factory, the
// registered control loops, the shared informers, a metrics endpoint. Only what our shipped Issuer
// and Certificate need is linked in: the self-signed and CA issuers, the approver and the
// certificates-* loops (no ACME, Vault, Venafi, ingress or Gateway shims), without leader election
// (one process per test).
//
//	controller --kubeconfig FILE [--namespace NS] [--metrics-address 127.0.0.1:0]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// The loops a Certificate from a namespaced self-signed or CA Issuer goes through.
var enabled = []string{
	"issuers",
	"certificaterequests-approver",
	"certificaterequests-issuer-selfsigned",
	"certificaterequests-issuer-ca",
	"certificates-trigger",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-issuing",
	"certificates-readiness",
	"certificates-revision-manager",
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := flag.String("namespace", "", "watch only this namespace (default: all)")
	metricsAddr := flag.String("metrics-address", "127.0.0.1:0", "address of the /metrics endpoint")
	workers := flag.Int("workers", 5, "workers per control loop")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background(), "cert-manager-controller")
	if err := run(ctx, *kubeconfig, *namespace, *metricsAddr, *workers); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager controller: %v\n", err)
		os.Exit(1)
	}
}

func run(rootCtx context.Context, kubeconfig, namespace, metricsAddr string, workers int) error {
	factory, err := controller.NewContextFactory(rootCtx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		Namespace:          namespace,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Second,
			CertificateRequestMaximumBackoffDuration: 30 * time.Second,
		},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	cmctx, err := factory.Build()
	if err != nil {
		return err
	}

	g, ctx := errgroup.WithContext(rootCtx)
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", metricsAddr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", metricsAddr, err)
	}
	// The harness reads the port from this line (metrics-address may end in :0).
	fmt.Fprintf(os.Stderr, "metrics listening on %s\n", ln.Addr())
	cmctx.Metrics.SetupCertificateCollector(cmctx.SharedInformerFactory.Certmanager().V1().Certificates().Lister())
	cmctx.Metrics.SetupIssuerCollector(cmctx.SharedInformerFactory.Certmanager().V1().Issuers().Lister())
	srv := cmctx.Metrics.NewServer(ln)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	})

	known := controller.Known()
	for _, name := range enabled {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("control loop %q is not linked in", name)
		}
		loop, err := construct(factory)
		if err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		g.Go(func() error { return loop.Run(workers, ctx) })
	}
	cmctx.SharedInformerFactory.Start(ctx.Done())
	cmctx.KubeSharedInformerFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager controller running %d control loops\n", len(enabled))
	err = g.Wait()
	cmctx.KubeSharedInformerFactory.Shutdown()
	cmctx.SharedInformerFactory.Shutdown()
	return err
}
