package v1alpha1

// Percent is a share in percent, 0 to 100, as a JSON number: every percent
// threshold of the API (validity, comparison criteria, regression policy)
// has this one type, so 0.5 and 90 are written alike.
// +kubebuilder:validation:Minimum=0
// +kubebuilder:validation:Maximum=100
type Percent float64
