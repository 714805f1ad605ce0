package cpi

import "github.com/cloudfoundry/bosh-cpi-go/apiv1"

// CreateStemcell implements apiv1.CPI.
func (c CPI) CreateStemcell(string, apiv1.StemcellCloudProps) (apiv1.StemcellCID, error) {
	return apiv1.StemcellCID{}, notImplemented("create_stemcell")
}

// DeleteStemcell implements apiv1.CPI.
func (c CPI) DeleteStemcell(apiv1.StemcellCID) error { return notImplemented("delete_stemcell") }
