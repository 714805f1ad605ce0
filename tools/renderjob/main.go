// Command renderjob renders a BOSH job's templates from a deployment
// manifest with bosh-cli v7.9.13's own renderer (templatescompiler, which
// runs ruby on its ERB evaluation context), the way the CLI renders a job:
//
//   - as the director's job (-as director): the job in an instance group,
//     with its own properties when it has a properties key, else the
//     instance group's merged over the manifest's top-level properties; a
//     v1 manifest's `jobs:` are instance groups whose `templates:` are their
//     jobs (as the director reads a v1 manifest), with no properties of
//     their own;
//   - as create-env's cloud_provider.template (-as cloud_provider): with
//     cloud_provider.properties only, as installation.JobRenderer does.
//
// Usage: renderjob -job jobs/NAME -manifest M.yml -as director|cloud_provider
// [-instance-group bosh] -out DIR. DIR gets the rendered files (bin/cpi,
// config/cpi.json, monit); a template error is printed on stderr, exit 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	biproperty "github.com/cloudfoundry/bosh-utils/property"
	boshsys "github.com/cloudfoundry/bosh-utils/system"
	boshuuid "github.com/cloudfoundry/bosh-utils/uuid"
	"gopkg.in/yaml.v2"

	bireljob "github.com/cloudfoundry/bosh-cli/v7/release/job"
	boshjobman "github.com/cloudfoundry/bosh-cli/v7/release/job/manifest"
	"github.com/cloudfoundry/bosh-cli/v7/release/resource"
	bitemplate "github.com/cloudfoundry/bosh-cli/v7/templatescompiler"
	bierbrenderer "github.com/cloudfoundry/bosh-cli/v7/templatescompiler/erbrenderer"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "renderjob:", err)
		os.Exit(1)
	}
}

type options struct {
	jobDir, manifest, as, instanceGroup, out string
}

func run(args []string) error {
	var o options
	flags := flag.NewFlagSet("renderjob", flag.ContinueOnError)
	flags.StringVar(&o.jobDir, "job", "", "the job's directory (spec, monit, templates/)")
	flags.StringVar(&o.manifest, "manifest", "", "an interpolated deployment manifest")
	flags.StringVar(&o.as, "as", "director", "director or cloud_provider")
	flags.StringVar(&o.instanceGroup, "instance-group", "bosh", "the instance group of -as director")
	flags.StringVar(&o.out, "out", "", "directory for the rendered files")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if o.jobDir == "" || o.manifest == "" || o.out == "" {
		return errors.New("-job, -manifest and -out are required")
	}
	m, err := readManifest(o.manifest)
	if err != nil {
		return err
	}
	logger := boshlog.NewLogger(boshlog.LevelNone)
	fsys := boshsys.NewOsFileSystem(logger)
	job, err := readJob(o.jobDir, fsys)
	if err != nil {
		return err
	}
	props, err := m.propertiesFor(o.as, o.instanceGroup, job.Name())
	if err != nil {
		return err
	}
	renderer := bitemplate.NewJobRenderer(
		bierbrenderer.NewERBRenderer(fsys, boshsys.NewExecCmdRunner(logger), logger),
		fsys, boshuuid.NewGenerator(), logger)
	rendered, err := renderer.Render(*job, props.job, props.instanceGroup, props.global, m.Name, "")
	if err != nil {
		return err
	}
	defer rendered.DeleteSilently()
	return copyTree(rendered.Path(), o.out)
}

// readJob reads a job directory as the CLI reads a job's archive
// (release/job.ArchiveReaderImpl): templates, packages and property
// definitions with their defaults.
func readJob(dir string, fsys boshsys.FileSystem) (*bireljob.Job, error) {
	spec, err := boshjobman.NewManifestFromPath(filepath.Join(dir, "spec"), fsys)
	if err != nil {
		return nil, err
	}
	job := bireljob.NewExtractedJob(resource.NewExistingResource(spec.Name, "", ""), dir, fsys)
	job.Templates = spec.Templates
	job.PackageNames = spec.Packages
	job.Properties = map[string]bireljob.PropertyDefinition{}
	for name, def := range spec.Properties {
		value, err := biproperty.Build(def.Default)
		if err != nil {
			return nil, fmt.Errorf("job %s property %s default: %w", spec.Name, name, err)
		}
		job.Properties[name] = bireljob.PropertyDefinition{Description: def.Description, Default: value}
	}
	return job, nil
}

type manifest struct {
	Name          string          `yaml:"name"`
	Properties    map[any]any     `yaml:"properties"`
	CloudProvider cloudProvider   `yaml:"cloud_provider"`
	Groups        []instanceGroup `yaml:"instance_groups"`
	// V1Jobs is a v1 manifest's instance groups.
	V1Jobs []instanceGroup `yaml:"jobs"`
}

type cloudProvider struct {
	Template   struct{ Name string } `yaml:"template"`
	Properties map[any]any           `yaml:"properties"`
}

type instanceGroup struct {
	Name       string      `yaml:"name"`
	Properties map[any]any `yaml:"properties"`
	Jobs       []groupJob  `yaml:"jobs"`
	// Templates are a v1 job's jobs.
	Templates []groupJob `yaml:"templates"`
}

type groupJob struct {
	Name       string      `yaml:"name"`
	Properties map[any]any `yaml:"properties"`
}

func readManifest(path string) (manifest, error) {
	var m manifest
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

type renderProperties struct {
	job                   *biproperty.Map
	instanceGroup, global biproperty.Map
}

func (m manifest) propertiesFor(as, group, jobName string) (renderProperties, error) {
	switch as {
	case "cloud_provider":
		if m.CloudProvider.Template.Name != jobName {
			return renderProperties{}, fmt.Errorf("cloud_provider.template is %q, not %q", m.CloudProvider.Template.Name, jobName)
		}
		props, err := build(m.CloudProvider.Properties)
		return renderProperties{instanceGroup: props, global: biproperty.Map{}}, err
	case "director":
		return m.directorProperties(group, jobName)
	}
	return renderProperties{}, fmt.Errorf("-as %q: want director or cloud_provider", as)
}

func (m manifest) directorProperties(group, jobName string) (renderProperties, error) {
	for _, g := range append(m.Groups, m.V1Jobs...) {
		if g.Name != group {
			continue
		}
		for _, j := range append(g.Jobs, g.Templates...) {
			if j.Name != jobName {
				continue
			}
			r := renderProperties{}
			var err error
			if r.global, err = build(m.Properties); err != nil {
				return r, err
			}
			if r.instanceGroup, err = build(g.Properties); err != nil {
				return r, err
			}
			if j.Properties != nil {
				own, err := build(j.Properties)
				r.job = &own
				return r, err
			}
			return r, nil
		}
		return renderProperties{}, fmt.Errorf("instance group %s has no job %s", group, jobName)
	}
	return renderProperties{}, fmt.Errorf("the manifest has no instance group %s", group)
}

func build(raw map[any]any) (biproperty.Map, error) {
	if raw == nil {
		return biproperty.Map{}, nil
	}
	return biproperty.BuildMap(raw)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if filepath.Base(filepath.Dir(rel)) == "bin" {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}
